// Rule discovery and reading: folder order, legacy .codexpolicy, fail closed on anything broken.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempEnv } from '../../helpers/env.js';
import { loadPolicy, ruleFiles, MAX_RULES_FILE_BYTES, defaultRulesFile } from '../../../src/rules/load.js';
import { PolicyError } from '../../../src/rules/error.js';

test('ruleFiles: GATE_HOME/rules, CODEX_HOME/rules, CODEX_HOME/policy — each sorted — then extra files', () => {
  const t = tempEnv();
  try {
    const { GATE_HOME, CODEX_HOME } = t.env;
    const put = (p: string, text = 'prefix_rule(pattern=["x"])\n') => {
      mkdirSync(join(p, '..'), { recursive: true });
      writeFileSync(p, text);
    };
    put(join(GATE_HOME, 'rules', 'b.rules'));
    put(join(GATE_HOME, 'rules', 'a.rules'));
    put(join(GATE_HOME, 'rules', 'notes.txt'));
    put(join(GATE_HOME, 'rules', 'x.rules.bak'));
    mkdirSync(join(GATE_HOME, 'rules', 'dir.rules'));
    put(join(CODEX_HOME, 'rules', 'default.rules'), 'prefix_rule(pattern=["rm"], decision="forbidden")\n');
    put(join(CODEX_HOME, 'policy', 'old.codexpolicy'), 'prefix_rule(pattern=["git"], decision="prompt")\n');
    put(join(t.dir, 'extra.rules'), 'prefix_rule(pattern=["rm"], decision="allow")\n');
    const files = ruleFiles({ env: t.env, extraFiles: [join(t.dir, 'extra.rules')] });
    assert.deepEqual(files, [
      join(GATE_HOME, 'rules', 'a.rules'),
      join(GATE_HOME, 'rules', 'b.rules'),
      join(CODEX_HOME, 'rules', 'default.rules'),
      join(CODEX_HOME, 'policy', 'old.codexpolicy'),
      join(t.dir, 'extra.rules'),
    ]);
    const p = loadPolicy({ env: t.env, extraFiles: [join(t.dir, 'extra.rules')] });
    assert.equal(p.check(['rm'], { resolveHostExecutables: true, hardened: false }).decision, 'forbidden');
    assert.equal(p.check(['git'], { resolveHostExecutables: true, hardened: false }).decision, 'prompt');
    assert.deepEqual(p.files, files);
    assert.equal(defaultRulesFile(t.env), join(CODEX_HOME, 'rules', 'default.rules'));
    assert.deepEqual(ruleFiles({ env: t.env, includeDefaults: false, extraFiles: ['z'] }), ['z']);
    // missing folders are fine
    assert.deepEqual(ruleFiles({ env: { ...t.env, GATE_HOME: join(t.dir, 'none'), CODEX_HOME: join(t.dir, 'none2') } }), []);
  } finally {
    t.cleanup();
  }
});

function failsAt(f: () => unknown, fileRe: RegExp, text: RegExp) {
  assert.throws(f, (e: unknown) => {
    assert.ok(e instanceof PolicyError, String(e));
    assert.match(e.file ?? '', fileRe);
    assert.match(e.message, text);
    return true;
  });
}

test('fail closed: broken file, non-UTF-8, oversized, rules path not a folder — nothing half-loads', () => {
  const t = tempEnv();
  try {
    const rules = join(t.env.GATE_HOME, 'rules');
    mkdirSync(rules, { recursive: true });
    writeFileSync(join(rules, 'a.rules'), 'prefix_rule(pattern=["ok"])\n');
    writeFileSync(join(rules, 'b.rules'), 'prefix_rule(pattern=["x"])\nprefix_rule(pattern=["y"], decision="maybe")\n');
    failsAt(() => loadPolicy({ env: t.env }), /b\.rules$/, /b\.rules:2:1: starlark error: invalid decision: maybe/);

    writeFileSync(join(rules, 'b.rules'), Buffer.concat([Buffer.from('# ok\nprefix_rule(pattern=["caf'), Buffer.from([0xe9]), Buffer.from('"])\n')]));
    failsAt(() => loadPolicy({ env: t.env }), /b\.rules$/, /b\.rules:2:26: rules file is not valid UTF-8/);

    writeFileSync(join(rules, 'b.rules'), '#'.repeat(10 * 1024 * 1024));
    failsAt(
      () => loadPolicy({ env: t.env }),
      /b\.rules$/,
      new RegExp(`b\\.rules:1:1: rules file is too large \\(10485760 bytes; the limit is ${MAX_RULES_FILE_BYTES}\\)`),
    );

    writeFileSync(join(rules, 'b.rules'), '');
    mkdirSync(t.env.CODEX_HOME, { recursive: true });
    writeFileSync(join(t.env.CODEX_HOME, 'rules'), 'not a folder');
    failsAt(() => loadPolicy({ env: t.env }), /ch\/rules$/, /failed to read rules files from .*ch\/rules: Not a directory/);
  } finally {
    t.cleanup();
  }
});
