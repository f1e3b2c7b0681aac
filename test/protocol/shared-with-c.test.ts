/**
 * Everything the C side shares with the TypeScript side has one source, src/protocol/shared-with-c.ts: the
 * committed shims/gate-shared.h must be what that module generates (a header that says anything else fails
 * here), no C file under shims/ or native/ may spell one of its values again (the list is the generator's,
 * cValues(), so it grows with the source), and the variables the C side reports must cover every name the
 * daemon judges as code loading.
 * Runs the generator (scripts/gen-c-header.mjs) in check mode; reads files only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  FORWARDED_NAMES,
  FORWARDED_PREFIXES,
  FORWARDED_SIGNALS,
  HOLDER_UNAVAILABLE_ERRNOS,
  PROTOCOL_VERSION,
} from '../../src/protocol/shared-with-c.js';
import { FORWARDED_SIGNALS as SIGNALS } from '../../src/exec/signals.js';
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

/** Every C source and header under dir, at any depth. */
function cFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? cFiles(join(dir, e.name)) : /\.[ch]$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

const reEscape = (v: string) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('no C file spells a value the generated header gives: every C folder, every value of the source', async () => {
  const { cValues } = (await import(pathToFileURL(GEN).href)) as { cValues: () => { names: string[]; fields: string[]; paths: string[] } };
  const { names, fields, paths } = cValues();
  for (const v of ['request.sock', 'start-up.key', 'daemon.log', '/tmp/gate-sh-']) assert.ok(paths.includes(v), v);
  // the lists are the module's: the names this contract is about are all in them
  for (const v of ['GATE_KERNEL_SOCK', 'GATE_RUN', 'GATE_CHECKED', 'GATE_ESCALATE', 'GATE_THEN', 'exec', 'Run', 'check'])
    assert.ok(names.includes(v), v);
  for (const f of ['program', 'argv', 'host_pid', 'escalation_token']) assert.ok(fields.includes(f), f);
  const files = [...cFiles(join(ROOT, 'shims')), ...cFiles(join(ROOT, 'native'))].filter((f) => !f.endsWith('gate-shared.h'));
  assert.ok(files.some((f) => f.includes('/native/')) && files.some((f) => f.includes('/launch/')));
  for (const f of files) {
    // comments may name what they explain
    const src = readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
    const name = f.slice(ROOT.length + 1);
    assert.doesNotMatch(src, new RegExp(`\\\\"v\\\\":${PROTOCOL_VERSION}`), `${name} spells the protocol version`);
    const spelled = (re: RegExp, v: string) => {
      const m = re.exec(src);
      assert.ok(!m, `${name} spells ${JSON.stringify(v)} (take it from shims/gate-shared.h): ${m?.[0]}`);
    };
    // a name as a C string ("v"), inside one (\"v\"), or as a variable's entry ("v=")
    for (const v of names) spelled(new RegExp(`"${reEscape(v)}[="]|\\\\"${reEscape(v)}\\\\"`), v);
    // a field as a key inside a string (\"v\"), or the key a reader compares with
    for (const v of fields) spelled(new RegExp(`\\\\"${reEscape(v)}\\\\"|\\bkey, "${reEscape(v)}"`), v);
    // a runtime file's name anywhere in a C string ("/request.sock")
    for (const v of paths) spelled(new RegExp(`"[^"\\n]*${reEscape(v)}`), v);
  }
});

test('the session holder reports errno values: the ones the daemon acts on are Linux\'s', () => {
  assert.equal(HOLDER_UNAVAILABLE_ERRNOS.EPERM, constants.errno.EPERM);
  assert.equal(HOLDER_UNAVAILABLE_ERRNOS.EINVAL, constants.errno.EINVAL);
});

test('the signals the C side passes on are the ones gate-sh and the escalation runner pass on', () => {
  assert.deepEqual([...FORWARDED_SIGNALS], [...SIGNALS]);
  for (const s of FORWARDED_SIGNALS) assert.equal(typeof constants.signals[s], 'number', s);
});

test('every variable the daemon judges as code loading is one the C side reports', () => {
  const forwarded = (name: string) => (FORWARDED_NAMES as readonly string[]).includes(name) || FORWARDED_PREFIXES.some((p) => name.startsWith(p));
  const { names, prefixes } = codeLoadingNames();
  for (const n of names) assert.ok(forwarded(n), n);
  // a judged family is reported whole: some reported prefix starts every name of it
  for (const p of prefixes) assert.ok(FORWARDED_PREFIXES.some((f) => p.startsWith(f)), p);
  assert.equal(isCodeLoadingName('PATH') && forwarded('PATH'), true);
});
