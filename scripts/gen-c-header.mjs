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
  if (!/^[A-Za-z0-9_.-]+$/.test(s)) throw new Error(`gate-sh: ${SOURCE}: ${JSON.stringify(s)} is not a plain name`);
  return `"${s}"`;
}

/** A path or an option as a C string: plain characters and slashes only. */
function cpath(s) {
  if (!/^[A-Za-z0-9_./-]+$/.test(s)) throw new Error(`gate-sh: ${SOURCE}: ${JSON.stringify(s)} is not a plain path`);
  return `"${s}"`;
}

/** A text as a C string (a printf format: printable ASCII, %s and no other %; quotes and backslashes escaped). */
function ctext(s) {
  if (!/^[\x20-\x7e]*$/.test(s) || /%(?!s)/.test(s)) throw new Error(`gate-sh: ${SOURCE}: ${JSON.stringify(s)} is not a plain text`);
  return `"${s.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
}

/** camelCase or kebab-case or snake_case as a C macro's tail: execReused, exec-reused -> EXEC_REUSED. */
const macro = (k) => k.replace(/[A-Z]/g, (m) => `_${m}`).replace(/[-.]/g, '_').toUpperCase();

/** One #define per entry of an object (prefix + its key) or of a list (prefix + the value itself). */
function defines(prefix, values) {
  const entries = Array.isArray(values) ? values.map((v) => [v, v]) : Object.entries(values);
  return entries.map(([k, v]) => `#define ${prefix}${macro(k)} ${cstr(v)}`).join('\n');
}

/** The field names, each once. */
const fieldNames = () => [...new Set([...c.FIELDS, ...c.ESCALATION_FIELDS, ...c.RUN_FINISHED_INFO_FIELDS])];

/** Every string the C side takes from this header, for the guard test: no C file spells one itself. Field
 * names are generic words ("pid", "type"), so they count only where they are a JSON key (\"pid\" inside a
 * string, or the key a reader compares: strcmp(key, "pid")); the names count as any C string. */
export function cValues() {
  return { fields: fieldNames(), names: cNames(), paths: cPaths() };
}

/** The runtime layout's names that no C string may hold, even as part of a path ("/request.sock"): the
 * distinctive ones (a folder named "c" or "req" is not worth a guard that words would trip). */
function cPaths() {
  const L = c.RUNTIME_LAYOUT;
  return [L.runUser, L.tmpFolder, L.requestSock, L.streamSock, L.startUpKey, L.lockFile, L.logFile, L.configFile, `${L.home}/`];
}

function cNames() {
  return [
    ...Object.values(c.EXEC_GATE_VARIABLES),
    ...Object.values(c.MESSAGE_TYPES),
    ...Object.values(c.ACTIONS),
    ...Object.values(c.ERROR_CODES),
    ...Object.values(c.SUPERVISOR_ERROR_CODES),
    ...Object.values(c.FIELD_VALUES),
    ...Object.values(c.HOLDER_VERBS),
    ...Object.values(c.HOLDER_LINES),
    c.NOTICE_SOCK,
    c.POLICY_EPOCH_FILE,
  ];
}

/** An X-macro list: `#define NAME(X) X("a") X("b") ...`, a line per few entries. */
function xlist(name, values, quote = cstr) {
  const items = values.map((v) => `X(${quote(v)})`);
  const lines = [];
  for (let i = 0; i < items.length; i += 6) lines.push(`  ${items.slice(i, i + 6).join(' ')}`);
  return `#define ${name}(X) \\\n${lines.join(' \\\n')}`;
}

export function render() {
  const fields = fieldNames();
  return `/*
 * Generated from ${SOURCE} by scripts/gen-c-header.mjs (npm run gen:c): do not edit.
 * The constants the C side shares with the TypeScript side;
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
/* The longest audit record kept whole (MAX_AUDIT_RECORD). */
#define GATE_MAX_AUDIT_RECORD ${c.MAX_AUDIT_RECORD}
/* Room for a datagram reply; a larger one is fetched again over the stream socket (CLIENT_REPLY_ROOM). */
#define GATE_REPLY_ROOM ${c.CLIENT_REPLY_ROOM}

/* The policy epoch's file, in the daemon's request folder (POLICY_EPOCH_FILE). */
#define GATE_POLICY_EPOCH_FILE ${cstr(c.POLICY_EPOCH_FILE)}

/* One call of gate-sh (RUN_CALL), a client's waits for the daemon (REQUEST_WAITS, EXEC_WAITS), and the lines a call's
 * client prints (CALL_TEXTS: printf formats, each %s a string). */
${Object.entries(c.RUN_CALL).map(([k, v]) => `#define GATE_CALL_${macro(k)} ${v}`).join('\n')}
${Object.entries(c.REQUEST_WAITS).map(([k, v]) => `#define GATE_WAIT_${macro(k)} ${v}`).join('\n')}
${Object.entries(c.EXEC_WAITS).map(([k, v]) => `#define GATE_EXEC_WAIT_${macro(k)} ${v}`).join('\n')}
${Object.entries(c.NATIVE_AUTOSTART).map(([k, v]) => `#define GATE_AUTOSTART_${macro(k)} ${v}`).join('\n')}
${Object.entries(c.CALL_TEXTS).map(([k, v]) => `#define GATE_TEXT_${macro(k)} ${ctext(v)}`).join('\n')}

/* The exec gate's variables and the marks an exec carries (EXEC_GATE_VARIABLES). */
${defines('GATE_VAR_', c.EXEC_GATE_VARIABLES)}

/* The signals passed on to the command (FORWARDED_SIGNALS), as X(SIGINT) ... */
#define GATE_FORWARDED_SIGNALS(X) ${c.FORWARDED_SIGNALS.map((s) => `X(${s})`).join(' ')}

/* The supervisors' notice socket, beside the request folder (NOTICE_SOCK). */
#define GATE_NOTICE_SOCK ${cstr(c.NOTICE_SOCK)}

/* The runtime folder and a session's files (RUNTIME_LAYOUT, src/paths/paths.ts), and where a bubblewrap is
 * trusted to be (TRUSTED_BWRAP_DIRS), as X("/usr/bin") ... */
${Object.entries(c.RUNTIME_LAYOUT).map(([k, v]) => `#define GATE_PATH_${macro(k)} ${cpath(v)}`).join('\n')}
${xlist('GATE_TRUSTED_BWRAP_DIRS', c.TRUSTED_BWRAP_DIRS, cpath)}

/* A host socket's mask, mounted by the launcher in the built sandbox, not by bubblewrap (SOCKET_MASK). Not in
 * the guard's list: bubblewrap's options and /dev/null are common words of the C side. */
#define GATE_SOCKET_MASK_OPTION ${cpath(c.SOCKET_MASK.option)}
#define GATE_SOCKET_MASK_SOURCE ${cpath(c.SOCKET_MASK.source)}

/* Message types (MESSAGE_TYPES), actions (ACTIONS), error codes (ERROR_CODES, SUPERVISOR_ERROR_CODES), field
 * values (FIELD_VALUES). */
${defines('GATE_MSG_', c.MESSAGE_TYPES)}
${defines('GATE_ACTION_', c.ACTIONS)}
${defines('GATE_CODE_', { ...c.ERROR_CODES, ...c.SUPERVISOR_ERROR_CODES })}
${defines('GATE_VALUE_', c.FIELD_VALUES)}

/* Field names (FIELDS, ESCALATION_FIELDS, RUN_FINISHED_INFO_FIELDS), and how JSON text is made of them: GATE_KEY(f) is ',"f":' (a
 * member after the first), GATE_KEY1(f) '"f":' (the first), GATE_QUOTE(v) '"v"'. */
${defines('GATE_F_', fields)}
#define GATE_QUOTE(v) "\\"" v "\\""
#define GATE_KEY1(f) "\\"" f "\\":"
#define GATE_KEY(f) ",\\"" f "\\":"

/* The session holder's line protocol (HOLDER_VERBS: the daemon's; HOLDER_LINES: how the holder's lines
 * start; an error line is "error <errno> <what>: <text>"). */
${defines('GATE_HOLDER_', c.HOLDER_VERBS)}
${defines('GATE_HOLDER_SAYS_', c.HOLDER_LINES)}

/* The variables an ExecRequest reports, by name and by prefix (FORWARDED_NAMES, FORWARDED_PREFIXES). */
${xlist('GATE_FORWARDED_NAMES', c.FORWARDED_NAMES)}
${xlist('GATE_FORWARDED_PREFIXES', c.FORWARDED_PREFIXES)}

/* gate-sh's plumbing, by the basename of a process's exe (PROVENANCE_PLUMBING): a scoped reuse stops there. */
${xlist('GATE_PROVENANCE_PLUMBING', c.PROVENANCE_PLUMBING)}

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
