/**
 * `gate rules list [--json]` and `gate rules add --forbid|--prompt|--allow PREFIX... [--justification TEXT]`:
 * the prefix rules in force, and a new one appended to the default rules file without hand-editing
 * (options: src/cli/args/rules.ts). `add` appends under the amendment lock (src/rules/amend.ts) a line it has
 * parsed first, then has a running daemon reload, so the next run is decided by it. Not pure: reads rule
 * files, writes one, talks to the daemon on the approval channel. Trust: the rule files are the user's.
 */
import { homedir } from 'node:os';
import { approvalCall } from '../../client/index.js';
import { loadConfig } from '../../config/index.js';
import { displayWord, visibleText } from '../../text/index.js';
import { gatePaths, type GatePaths } from '../../paths/index.js';
import { appendPrefixRule, type Decision, defaultRulesFile, parsePolicy, PolicyError, readRulesFile, ruleFiles } from '../../rules/index.js';

/** The rule files in force: the running daemon's (as it loaded them), else those a daemon would load. */
async function filesInForce(paths: GatePaths): Promise<{ files: readonly string[]; from: string }> {
  try {
    const s = (await approvalCall(paths, 'status')).status as { pid?: number; policy?: { files?: string[] } };
    if (Array.isArray(s.policy?.files)) return { files: s.policy.files, from: `the daemon of session '${paths.session}' (pid ${s.pid})` };
  } catch {
    /* no daemon: what one would load */
  }
  const config = loadConfig({ file: paths.configFile, env: process.env });
  return { files: ruleFiles({ env: process.env, extraFiles: config.rules }), from: `no daemon runs for session '${paths.session}': what one would load` };
}

/** One rule's pattern as its file spells it: ["git", ["push", "fetch"]]. */
function pattern(first: string, rest: readonly (string | readonly string[])[]): string {
  const tok = (t: string | readonly string[]): string => (typeof t === 'string' ? JSON.stringify(t) : `[${t.map((a) => JSON.stringify(a)).join(', ')}]`);
  return `[${[first, ...rest].map(tok).join(', ')}]`;
}

export async function list(values: { json: boolean }): Promise<number> {
  const paths = gatePaths(process.env);
  try {
    const { files, from } = await filesInForce(paths);
    const rules = parsePolicy(files.map(readRulesFile), { home: homedir() }).prefixRules();
    if (values.json) {
      const out = rules.map((r) => ({
        file: r.source.file,
        line: r.source.line,
        decision: r.decision,
        pattern: [r.pattern.first, ...r.pattern.rest],
        justification: r.justification ?? null,
      }));
      process.stdout.write(JSON.stringify(out, null, 2) + '\n');
      return 0;
    }
    process.stdout.write(`# ${from}; ${files.length} file(s), ${rules.length} prefix rule(s)\n`);
    const rows = rules.map((r) => [
      `${r.source.file}:${r.source.line}`,
      r.decision,
      visibleText(pattern(r.pattern.first, r.pattern.rest)),
      visibleText(r.justification ?? ''),
    ]);
    const width = [0, 1, 2].map((i) => Math.max(0, ...rows.map((row) => row[i].length)));
    for (const row of rows) process.stdout.write(row.map((c, i) => (i === row.length - 1 ? c : c.padEnd(width[i]))).join('  ').trimEnd() + '\n');
    return 0;
  } catch (e) {
    if (!(e instanceof PolicyError)) throw e;
    process.stderr.write(`gate: rules list: the rules do not load: ${e.message}\n`);
    return 1;
  }
}

/** Options of `add`, as src/cli/args/rules.ts declares them. */
export interface AddArgs {
  decision: Decision;
  prefix: string[];
  justification?: string;
  file?: string;
}

export async function add(values: AddArgs): Promise<number> {
  const paths = gatePaths(process.env);
  const file = values.file ?? defaultRulesFile(process.env);
  let r: 'appended' | 'exists';
  try {
    r = await appendPrefixRule(file, values.prefix, values.decision, values.justification);
  } catch (e) {
    if (!(e instanceof PolicyError)) throw e;
    process.stderr.write(`gate: rules add: cannot add to ${file}: ${e.message}\n`);
    return 1;
  }
  const shown = values.prefix.map(displayWord).join(' ');
  process.stdout.write(`${r === 'appended' ? 'added' : 'already there'}: ${values.decision} ${shown} (${file})\n`);
  // the daemon also reloads by itself on a save; asked here so the next run is decided by the new rule
  let reloaded: { files: string[]; error?: string | null } | undefined;
  try {
    reloaded = (await approvalCall(paths, 'reload')) as { files: string[]; error?: string | null };
  } catch {
    process.stdout.write(`no daemon runs for session '${paths.session}': it loads the rule when it starts\n`);
    return 0;
  }
  if (reloaded.error) {
    process.stderr.write(`gate: rules add: the daemon's reload failed: ${reloaded.error}; runs are refused until it is fixed\n`);
    return 1;
  }
  const inForce = reloaded.files.includes(file);
  process.stdout.write(
    inForce
      ? `in force: the daemon of session '${paths.session}' reloaded its ${reloaded.files.length} rule file(s)\n`
      : `note: the daemon of session '${paths.session}' does not load ${file} (its files: ${reloaded.files.join(', ') || 'none'})\n`,
  );
  return 0;
}
