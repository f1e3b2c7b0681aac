/**
 * `gate policy check --rules F [--rules F2 ...] [--pretty] [--resolve-host-executables] [--hardened] -- CMD...`
 * prints exactly what `codex execpolicy check` prints. Without --rules it checks against the rule folders
 * gate-sh loads ($GATE_HOME/rules, $CODEX_HOME/rules, $CODEX_HOME/policy). Hand-parsed: no yargs at start-up.
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

const USAGE = `usage: gate policy check [--rules PATH]... [--pretty] [--resolve-host-executables] [--hardened] [--] COMMAND...
       gate policy files [--rules PATH]...
       gate policy amend [--file PATH] [--] COMMAND...

check   check a command against execpolicy rule files; prints what \`codex execpolicy check\` prints
files   list the rule files gate-sh loads, in order, and validate them (exit 1 with the location if broken)
amend   append prefix_rule(pattern=[COMMAND...], decision="allow") to the default rules file
        ($CODEX_HOME/rules/default.rules, or --file), under a lock, unless it is already there

  -r, --rules PATH              rule file to load (repeatable); default: the rule folders gate-sh uses
      --pretty                  pretty-print the JSON
      --resolve-host-executables
                                resolve absolute program paths against basename rules (host_executable)
      --hardened                also report basename prompt/forbidden rules for any path spelling
  -h, --help                    this help`;

interface CheckArgs {
  rules: string[];
  pretty: boolean;
  resolve: boolean;
  hardened: boolean;
  command: string[];
}

class UsageError extends Error {}

function parseArgs(argv: string[]): CheckArgs | 'help' {
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
  process.stderr.write(`gate-sh: ${headline}\n\nCaused by:\n    ${cause.replace(/\n/g, '\n    ')}\n`);
  return 1;
}

async function check(argv: string[]): Promise<number> {
  let args: CheckArgs | 'help';
  try {
    args = parseArgs(argv);
  } catch (e) {
    process.stderr.write(`gate-sh: ${(e as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (args === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
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

async function files(argv: string[]): Promise<number> {
  const extra: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if ((argv[i] === '--rules' || argv[i] === '-r') && argv[i + 1] !== undefined) extra.push(argv[++i]);
    else if (argv[i] === '-h' || argv[i] === '--help') return (process.stdout.write(USAGE + '\n'), 0);
    else return (process.stderr.write(`gate-sh: unexpected argument '${argv[i]}'\n\n${USAGE}\n`), 2);
  }
  try {
    const list = ruleFiles({ extraFiles: extra });
    const policy = parsePolicy(list.map(readRulesFile), { home: homedir() });
    for (const f of list) process.stdout.write(f + '\n');
    process.stderr.write(`${list.length} file(s), ${policy.ruleCount} prefix rule(s): valid\n`);
    return 0;
  } catch (e) {
    if (e instanceof PolicyError) return fail('the rules do not load', e.message);
    throw e;
  }
}

async function amend(argv: string[]): Promise<number> {
  let file: string | undefined;
  let i = 0;
  for (; i < argv.length; i++) {
    if (argv[i] === '--file' && argv[i + 1] !== undefined) file = argv[++i];
    else if (argv[i] === '--') {
      i++;
      break;
    } else if (argv[i] === '-h' || argv[i] === '--help') return (process.stdout.write(USAGE + '\n'), 0);
    else if (argv[i].startsWith('-')) return (process.stderr.write(`gate-sh: unexpected argument '${argv[i]}'\n\n${USAGE}\n`), 2);
    else break;
  }
  const prefix = argv.slice(i);
  const target = file ?? defaultRulesFile();
  try {
    const r = await appendAllowPrefixRule(target, prefix);
    process.stdout.write(`${r === 'appended' ? 'appended' : 'already present'}: ${formatAllowPrefixRule(prefix)} (${target})\n`);
    return 0;
  } catch (e) {
    if (e instanceof PolicyError) return (process.stderr.write(`gate-sh: cannot amend ${target}: ${e.message}\n`), 1);
    throw e;
  }
}

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'check') return check(rest);
  if (sub === 'files') return files(rest);
  if (sub === 'amend') return amend(rest);
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    process.stdout.write(USAGE + '\n');
    return sub === undefined ? 2 : 0;
  }
  process.stderr.write(`gate-sh: unknown policy subcommand '${sub}'\n\n${USAGE}\n`);
  return 2;
}
