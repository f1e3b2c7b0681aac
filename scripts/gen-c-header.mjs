// Writes shims/gate-shared.h, the constants the C side of the request channel shares with the TypeScript
// side, from their one source, src/protocol/shared-with-c.ts (compiled: run after `tsc`). The header is
// committed, because the C side builds at install before any TypeScript does.
//   node scripts/gen-c-header.mjs              write shims/gate-shared.h (npm run gen:c)
//   node scripts/gen-c-header.mjs --check [H]  exit 1, saying what differs, when H (default the header)
//                                              is not what the TypeScript source gives
// Pure apart from reading the compiled module and reading or writing the one header.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const HEADER = join(ROOT, 'shims', 'gate-shared.h');
const SOURCE = 'src/protocol/shared-with-c.ts';

const c = await import(pathToFileURL(join(ROOT, 'dist', SOURCE.replace(/\.ts$/, '.js'))).href);

/** A C string literal (the values are plain ASCII names; anything else is refused, not escaped). */
function cstr(s) {
  if (!/^[A-Za-z0-9_]+$/.test(s)) throw new Error(`gate-sh: ${SOURCE}: ${JSON.stringify(s)} is not a plain name`);
  return `"${s}"`;
}

/** An X-macro list: `#define NAME(X) X("a") X("b") ...`, a line per few entries. */
function xlist(name, values) {
  const items = values.map((v) => `X(${cstr(v)})`);
  const lines = [];
  for (let i = 0; i < items.length; i += 6) lines.push(`  ${items.slice(i, i + 6).join(' ')}`);
  return `#define ${name}(X) \\\n${lines.join(' \\\n')}`;
}

export function render() {
  const vars = Object.entries(c.EXEC_GATE_VARIABLES).map(([k, v]) => {
    const macro = `GATE_VAR_${k.replace(/[A-Z]/g, (m) => `_${m}`).toUpperCase()}`;
    return `#define ${macro} ${cstr(v)}`;
  });
  return `/*
 * Generated from ${SOURCE} by scripts/gen-c-header.mjs (npm run gen:c): do not edit.
 * The constants the request channel's C side shares with its TypeScript side;
 * test/protocol/shared-with-c.test.ts fails when this file differs from what that module gives.
 * Pure: macros only.
 */
#ifndef GATE_SHARED_H
#define GATE_SHARED_H

#define GATE_PROTOCOL_VERSION ${c.PROTOCOL_VERSION}
/* every message starts so: {"v":<version>,"id":... */
#define GATE_MSG_HEAD "{\\"v\\":${c.PROTOCOL_VERSION},\\"id\\":"
#define GATE_MAX_DATAGRAM ${c.MAX_DATAGRAM}
#define GATE_MAX_FRAME ${c.MAX_STREAM_FRAME}
/* Room for a datagram reply; a larger one is fetched again over the stream socket (CLIENT_REPLY_ROOM). */
#define GATE_REPLY_ROOM ${c.CLIENT_REPLY_ROOM}

/* The policy epoch's file, in the daemon's request folder (POLICY_EPOCH_FILE). */
#define GATE_POLICY_EPOCH_FILE ${cstr(c.POLICY_EPOCH_FILE)}

/* The exec gate's variables (EXEC_GATE_VARIABLES). */
${vars.join('\n')}

/* The variables an ExecRequest reports, by name and by prefix (FORWARDED_NAMES, FORWARDED_PREFIXES). */
${xlist('GATE_FORWARDED_NAMES', c.FORWARDED_NAMES)}
${xlist('GATE_FORWARDED_PREFIXES', c.FORWARDED_PREFIXES)}

#endif
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const want = render();
  const i = process.argv.indexOf('--check');
  if (i < 0) {
    writeFileSync(HEADER, want);
  } else {
    const file = process.argv[i + 1] ?? HEADER;
    let have = '';
    try {
      have = readFileSync(file, 'utf8');
    } catch (e) {
      have = `(unreadable: ${e.message})`;
    }
    if (have !== want) {
      const a = have.split('\n');
      const b = want.split('\n');
      let line = 0;
      while (a[line] === b[line]) line++;
      process.stderr.write(
        `gate-sh: ${file} differs from ${SOURCE} at line ${line + 1}:\n  header: ${a[line] ?? '(end)'}\n  source: ${b[line] ?? '(end)'}\ngate-sh: run npm run gen:c after changing ${SOURCE}\n`,
      );
      process.exit(1);
    }
  }
}
