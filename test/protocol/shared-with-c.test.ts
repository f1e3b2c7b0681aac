/**
 * The constants the request channel's C side shares with its TypeScript side have one source,
 * src/protocol/shared-with-c.ts: the committed shims/gate-shared.h must be what that module generates (a
 * header that says anything else fails here), the C sources must not spell the values again, and the
 * variables the C side reports must cover every name the daemon judges as code loading.
 * Runs the generator (scripts/gen-c-header.mjs) in check mode; reads files only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FORWARDED_NAMES, FORWARDED_PREFIXES, PROTOCOL_VERSION } from '../../src/protocol/shared-with-c.js';
import { codeLoadingNames, isCodeLoadingName } from '../../src/heuristics/code-loading.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const GEN = join(ROOT, 'scripts', 'gen-c-header.mjs');
const HEADER = join(ROOT, 'shims', 'gate-shared.h');

const check = (header?: string) => spawnSync(process.execPath, [GEN, '--check', ...(header ? [header] : [])], { encoding: 'utf8' });

test('shims/gate-shared.h is what src/protocol/shared-with-c.ts generates', () => {
  const r = check();
  assert.equal(r.status, 0, r.stderr);
});

test('a header that differs from the TypeScript source fails the check, saying where', () => {
  const dir = mkdtempSync(join(tmpdir(), 'g-shared-'));
  try {
    const changed = join(dir, 'gate-shared.h');
    writeFileSync(changed, readFileSync(HEADER, 'utf8').replace(/#define GATE_REPLY_ROOM \d+/, '#define GATE_REPLY_ROOM 4096'));
    const r = check(changed);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^gate-sh: .*gate-shared\.h differs from src\/protocol\/shared-with-c\.ts at line \d+:\n {2}header: #define GATE_REPLY_ROOM 4096\n/);
    // the same header unchanged passes
    writeFileSync(changed, readFileSync(HEADER, 'utf8'));
    assert.equal(check(changed).status, 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the C sources take the protocol version and the variable names from the generated header', () => {
  const shims = join(ROOT, 'shims');
  for (const f of readdirSync(shims).filter((n) => /\.[ch]$/.test(n) && n !== 'gate-shared.h')) {
    const src = readFileSync(join(shims, f), 'utf8');
    assert.doesNotMatch(src, new RegExp(`\\\\"v\\\\":${PROTOCOL_VERSION}`), `${f} spells the protocol version`);
    assert.doesNotMatch(src, /"(GATE_REQUEST_SOCK|GATE_STREAM_SOCK|GATE_ESCALATE_SOCK|GATE_CLIENT_DIR|GATE_EXEC_TIMEOUT_MS)"/, `${f} spells a variable name`);
  }
});

test('every variable the daemon judges as code loading is one the C side reports', () => {
  const forwarded = (name: string) => (FORWARDED_NAMES as readonly string[]).includes(name) || FORWARDED_PREFIXES.some((p) => name.startsWith(p));
  const { names, prefixes } = codeLoadingNames();
  for (const n of names) assert.ok(forwarded(n), n);
  // a judged family is reported whole: some reported prefix starts every name of it
  for (const p of prefixes) assert.ok(FORWARDED_PREFIXES.some((f) => p.startsWith(f)), p);
  assert.equal(isCodeLoadingName('PATH') && forwarded('PATH'), true);
});
