// Every policy_cases, policy_errors, amend_cases and network_cases vector from Codex's own tests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { vectors } from '../helpers/vectors.js';
import { parsePolicy } from '../../src/rules/parser.js';
import { PolicyError } from '../../src/rules/error.js';
import { isPolicyMatch, type PrefixRuleMatch } from '../../src/rules/policy.js';
import { appendAllowPrefixRule, appendNetworkRule } from '../../src/rules/amend.js';

const prompt = () => 'prompt' as const;

test('policy_cases: decision, matched prefixes, resolved program, justification', () => {
  assert.ok(vectors.policy_cases.length >= 38);
  for (const v of vectors.policy_cases) {
    const files: string[] = v.policy_files ?? [v.policy];
    const policy = parsePolicy(files.map((text, k) => ({ path: `case${k}.rules`, text })));
    const opts = { resolveHostExecutables: v.resolve_host_executables ?? false, hardened: false };
    const ev = v.commands ? policy.checkMultiple(v.commands, opts, prompt) : policy.check(v.command, opts, prompt);
    const rules = ev.matchedRules.filter((m): m is PrefixRuleMatch => m.type === 'prefixRuleMatch');
    if (v.expect === 'noMatch') {
      assert.equal(isPolicyMatch(ev), false, v.note);
      assert.equal(ev.matchedRules[0]?.type, 'heuristicsRuleMatch', v.note);
      assert.equal(policy.check(v.command, opts).decision, undefined, v.note);
      continue;
    }
    assert.equal(ev.decision, v.expect, v.note);
    assert.ok(isPolicyMatch(ev), v.note);
    if (v.matchedPrefixes) assert.deepEqual(rules.map((m) => m.matchedPrefix), v.matchedPrefixes, v.note);
    if (v.matchedDecisions) assert.deepEqual(rules.map((m) => m.decision), v.matchedDecisions, v.note);
    if (v.resolvedProgram) assert.equal(rules[0].resolvedProgram, v.resolvedProgram, v.note);
    if (v.justification) assert.equal(rules[0].justification, v.justification, v.note);
  }
});

test('policy_errors: rejected with Codex wording and a location', () => {
  assert.ok(vectors.policy_errors.length >= 31);
  for (const v of vectors.policy_errors) {
    assert.throws(
      () => parsePolicy([{ path: 'bad.rules', text: v.policy }]),
      (e: unknown) => {
        assert.ok(e instanceof PolicyError, v.note);
        if (v.error_contains) assert.ok(e.message.includes(v.error_contains), `${v.note}: ${e.message}`);
        assert.match(e.message, /^bad\.rules:\d+:\d+: /, v.note);
        return true;
      },
      v.note,
    );
  }
});

test('network_cases: domain lists', () => {
  for (const v of vectors.network_cases) {
    const policy = parsePolicy([{ path: 'net.rules', text: v.policy }]);
    assert.deepEqual(policy.networkDomains(), { allowed: v.allowed, denied: v.denied }, v.note);
  }
});

test('amend_cases: file contents after appending, errors before touching the disk', async () => {
  const root = mkdtempSync(join(tmpdir(), 'amend-'));
  try {
    let k = 0;
    for (const v of vectors.amend_cases) {
      const file = join(root, `c${k++}`, 'rules', 'default.rules');
      if (v.existing !== null) {
        await appendAllowPrefixRule(join(dirname(file), 'seed'), ['seed']); // creates the folder
        writeFileSync(file, v.existing);
      }
      const append = () => (v.network ? appendNetworkRule(file, v.network) : appendAllowPrefixRule(file, v.prefix));
      if (v.error) {
        await assert.rejects(append(), (e: Error) => e.message.includes(v.error), v.note);
        assert.equal(existsSync(dirname(file)), false, `${v.note}: nothing created`);
        continue;
      }
      for (let n = 0; n < (v.append_times ?? 1); n++) await append();
      assert.equal(readFileSync(file, 'utf8'), v.file_after, v.note);
      // the file still parses and the appended rule now allows the prefix
      if (v.prefix) {
        const policy = parsePolicy([{ path: file, text: v.file_after }]);
        assert.equal(policy.check([...v.prefix, 'extra'], { resolveHostExecutables: true, hardened: false }).decision, 'allow');
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
