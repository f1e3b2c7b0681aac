// Amendments: Codex's line format, semantic dedupe, and 20 real processes appending at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { appendAllowPrefixRule, formatAllowPrefixRule } from '../../src/rules/amend.js';
import { parsePolicy } from '../../src/rules/parser.js';
import { ROOT } from '../helpers/env.js';

test('formatAllowPrefixRule: JSON-encoded tokens, Codex layout', () => {
  assert.equal(formatAllowPrefixRule(['echo', 'Hello, world!']), 'prefix_rule(pattern=["echo", "Hello, world!"], decision="allow")');
  assert.equal(
    formatAllowPrefixRule(['printf', '%s', '"q"\\', 'é', '\x1b']),
    'prefix_rule(pattern=["printf", "%s", "\\"q\\"\\\\", "é", "\\u001b"], decision="allow")',
  );
  // what we write, we read back to the same tokens
  const tokens = ['a"b', 'c\\d', 'tab\t', 'nl\n', 'é', '\u2028', '\x7f', ''];
  const p = parsePolicy([{ path: 'x', text: formatAllowPrefixRule(['x', ...tokens]) }]);
  assert.equal(p.check(['x', ...tokens], { resolveHostExecutables: false, hardened: false }).decision, 'allow');
});

test('dedupe is semantic: a rule inside a string literal is not a declaration', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'amend-'));
  try {
    const file = join(dir, 'default.rules');
    const line = formatAllowPrefixRule(['git', 'status']);
    writeFileSync(file, `unused = """\n${line}\n"""`);
    assert.equal(await appendAllowPrefixRule(file, ['git', 'status']), 'appended');
    assert.equal(readFileSync(file, 'utf8'), `unused = """\n${line}\n"""\n${line}\n`);
    assert.equal(await appendAllowPrefixRule(file, ['git', 'status']), 'exists');
    assert.equal(readFileSync(file, 'utf8').split(line).length, 3);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('20 processes appending at once lose nothing and corrupt nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'amend-'));
  try {
    const file = join(dir, 'rules', 'default.rules');
    const amendUrl = pathToFileURL(join(ROOT, 'dist/src/rules/amend.js')).href;
    // each process appends its own 3 rules plus one rule every process shares (deduplicated)
    const script = `const { appendAllowPrefixRule } = await import(${JSON.stringify(amendUrl)});
const [file, id] = process.argv.slice(1);
for (let k = 0; k < 3; k++) await appendAllowPrefixRule(file, ['proc-' + id, 'rule ' + k, 'x'.repeat(200)]);
await appendAllowPrefixRule(file, ['shared', 'rule']);`;
    const runs = Array.from({ length: 20 }, (_, id) =>
      new Promise<number>((resolve) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, file, String(id)], { stdio: ['ignore', 'ignore', 'inherit'] });
        child.on('close', (code) => resolve(code ?? -1));
      }),
    );
    const pids = await Promise.all(runs);
    assert.deepEqual(pids, new Array(20).fill(0));
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    assert.equal(lines.pop(), '', 'ends with a newline');
    assert.equal(lines.length, 20 * 3 + 1);
    assert.equal(new Set(lines).size, lines.length, 'no duplicates');
    for (let id = 0; id < 20; id++) for (let k = 0; k < 3; k++) assert.ok(lines.includes(formatAllowPrefixRule([`proc-${id}`, `rule ${k}`, 'x'.repeat(200)])));
    assert.equal(lines.filter((l) => l === formatAllowPrefixRule(['shared', 'rule'])).length, 1);
    const policy = parsePolicy([{ path: file, text }]);
    assert.equal(policy.ruleCount, 61);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
