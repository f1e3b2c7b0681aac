/**
 * `gate policy check --rules F [--rules F2 ...] [--pretty] [--resolve-host-executables] [--hardened] -- CMD...`
 * prints exactly what `codex execpolicy check` prints. Without --rules it checks against the rule folders
 * gate-sh loads ($GATE_HOME/rules, $CODEX_HOME/rules, $CODEX_HOME/policy). `check` is hand-parsed as Codex's clap
 * parses it, and run without yargs (src/cli/gate.ts); `files` and `amend` take what src/cli/args/policy.ts parsed.
 */
import { homedir } from 'node:os';
import {
  appendAllowPrefixRule,
  defaultRulesFile,
  formatAllowPrefixRule,
  formatCheckOutput,
  parsePolicy,
  PolicyError,
  type PolicySource,
  readRulesFile,
  ruleFiles,
} from '../../rules/index.js';

/** The synopsis of `check`, shown after a usage error (its options: 'gate policy check --help'). */
export const CHECK_USAGE =
  'usage: gate policy check [--rules PATH]... [--pretty] [--resolve-host-executables] [--hardened] [--] COMMAND...\n' +
  "(options: 'gate policy check --help')";

interface CheckArgs {
  rules: string[];
  pretty: boolean;
  resolve: boolean;
  hardened: boolean;
  command: string[];
}

class UsageError extends Error {}

/** `check`'s arguments as clap reads Codex's: 'help' when -h/--help comes before the command. */
export function parseCheckArgs(argv: readonly string[]): CheckArgs | 'help' {
  const a: CheckArgs = { rules: [], pretty: false, resolve: false, hardened: false, command: [] };
  for (let i = 0; i < argv.length; i++) {
    const x = argv[i];
    if (x === '--') {
      a.command = argv.slice(i + 1);
      break;
    }
    if (x === '-h' || x === '--help') return 'help';
    const flag = x === '--pretty' ? 'pretty' : x === '--resolve-host-executables' ? 'resolve' : x === '--hardened' ? 'hardened' : undefined;
    if (flag) {
      if (a[flag]) throw new UsageError(`the argument '${x}' cannot be used multiple times`);
      a[flag] = true;
    } else if (x === '-r' || x === '--rules') {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`a value is required for '--rules <PATH>' but none was supplied`);
      a.rules.push(v);
    } else if (x.startsWith('--rules=')) a.rules.push(x.slice('--rules='.length));
    else if (x.startsWith('-r') && x.length > 2) a.rules.push(x.slice(2));
    else if (x.startsWith('-') && x !== '-') throw new UsageError(`unexpected argument '${x}' found`);
    else {
      // the command starts here; everything after it belongs to it (hyphen values allowed)
      a.command = argv.slice(i);
      break;
    }
  }
  if (a.command.length === 0) throw new UsageError('the following required arguments were not provided: <COMMAND>...');
  return a;
}

function fail(headline: string, cause: string): number {
  process.stderr.write(`gate: ${headline}\n\nCaused by:\n    ${cause.replace(/\n/g, '\n    ')}\n`);
  return 1;
}

/** `gate policy check ARGS...`; its --help is yargs' (src/cli/gate.ts sends it there). */
export async function check(argv: readonly string[]): Promise<number> {
  let args: CheckArgs | 'help';
  try {
    args = parseCheckArgs(argv);
  } catch (e) {
    process.stderr.write(`gate: policy check: ${(e as Error).message}\n\n${CHECK_USAGE}\n`);
    return 2;
  }
  if (args === 'help') throw new Error("'gate policy check --help' is yargs' (src/cli/gate.ts)");
  let files: string[];
  try {
    files = args.rules.length ? args.rules : ruleFiles({});
  } catch (e) {
    if (e instanceof PolicyError) return fail('failed to read rules files', e.message);
    throw e;
  }
  const sources: PolicySource[] = [];
  for (const f of files) {
    try {
      sources.push(readRulesFile(f));
    } catch (e) {
      if (e instanceof PolicyError) return fail(`failed to read policy at ${f}`, e.message);
      throw e;
    }
  }
  let policy;
  try {
    policy = parsePolicy(sources, { home: homedir() });
  } catch (e) {
    if (e instanceof PolicyError) return fail(`failed to parse policy at ${e.file ?? files[files.length - 1]}`, e.message);
    throw e;
  }
  // like Codex's CLI, relative and ~/ spellings resolve against the working directory and home
  const ev = policy.check(args.command, { resolveHostExecutables: args.resolve, hardened: args.hardened, cwd: process.cwd(), home: homedir() });
  process.stdout.write(formatCheckOutput(ev, args.pretty) + '\n');
  return 0;
}

/** `gate policy files [--rules PATH]...` */
export async function files(values: { rules: string[] }): Promise<number> {
  try {
    const list = ruleFiles({ extraFiles: values.rules });
    const policy = parsePolicy(list.map(readRulesFile), { home: homedir() });
    for (const f of list) process.stdout.write(f + '\n');
    process.stderr.write(`${list.length} file(s), ${policy.ruleCount} prefix rule(s): valid\n`);
    return 0;
  } catch (e) {
    if (e instanceof PolicyError) return fail('the rules do not load', e.message);
    throw e;
  }
}

/** `gate policy amend [--file PATH] [--] COMMAND...` (a prefix of at least one word: src/cli/args/policy.ts) */
export async function amend(values: { file?: string; prefix: string[] }): Promise<number> {
  const { prefix } = values;
  const target = values.file ?? defaultRulesFile();
  try {
    const r = await appendAllowPrefixRule(target, prefix);
    process.stdout.write(`${r === 'appended' ? 'appended' : 'already present'}: ${formatAllowPrefixRule(prefix)} (${target})\n`);
    return 0;
  } catch (e) {
    if (e instanceof PolicyError) return (process.stderr.write(`gate: cannot amend ${target}: ${e.message}\n`), 1);
    throw e;
  }
}
