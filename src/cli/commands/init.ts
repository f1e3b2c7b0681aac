/**
 * `gate init [--force]`: a commented config.toml in $GATE_HOME (every key the loader knows, with its default
 * and what it does: src/config/commented.ts) and an empty default rules file ($CODEX_HOME/rules/default.rules,
 * where amendments and `gate rules add` append) with a header saying how rules are written. An existing file
 * is never replaced without --force: then nothing is written, the files are named, exit 1. Each file is
 * written whole or not at all (a temporary file, then link(2) — which refuses to replace — or, with --force,
 * rename(2)). Not pure (writes files). Trust: the user's own folders.
 */
import { existsSync, linkSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { commentedConfig } from '../../config/index.js';
import { gatePaths } from '../../paths/index.js';
import { defaultRulesFile } from '../../rules/index.js';

/** The header of a new rules file. */
export function rulesHeader(file: string): string {
  return [
    `# gate-sh rules (${file}), written by 'gate init'. Codex's rule language (docs/rules.md):`,
    '#   prefix_rule(pattern=["git", "push"], decision="prompt", justification="pushes are reviewed")',
    '#   prefix_rule(pattern=["rm", "-rf"], decision="forbidden")',
    '#   prefix_rule(pattern=["npm", ["test", "run"]], decision="allow")',
    "# decision: allow | prompt | forbidden (strictest wins). Add one without editing: gate rules add --forbid rm -rf",
    "# Amendments (a person's 'approve and save the rule') are appended here too. Saved changes load by themselves.",
    '',
  ].join('\n');
}

/** Write `text` to `file` whole: never over an existing file unless `force`. */
function writeWhole(file: string, text: string, force: boolean): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.gate-init-${process.pid}`;
  writeFileSync(tmp, text, { mode: 0o644 });
  try {
    if (force) renameSync(tmp, file);
    else linkSync(tmp, file); // EEXIST if someone made it meanwhile: nothing replaced
  } finally {
    rmSync(tmp, { force: true });
  }
}

export async function run(values: { force: boolean }): Promise<number> {
  const paths = gatePaths(process.env);
  const rules = defaultRulesFile(process.env);
  const files: [string, string][] = [
    [paths.configFile, commentedConfig({ auditLog: paths.auditLog, file: paths.configFile })],
    [rules, rulesHeader(rules)],
  ];
  const there = files.filter(([f]) => existsSync(f)).map(([f]) => f);
  if (there.length && !values.force) {
    process.stderr.write(`gate: init: ${there.join(' and ')} exist${there.length === 1 ? 's' : ''}; nothing was written (--force replaces them)\n`);
    return 1;
  }
  for (const [file, text] of files) {
    writeWhole(file, text, values.force);
    process.stdout.write(`${there.includes(file) ? 'replaced' : 'wrote'} ${file}\n`);
  }
  return 0;
}
