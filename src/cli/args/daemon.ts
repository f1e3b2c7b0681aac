/**
 * `gate daemon run|start|stop|restart|status`: declaration (the command: src/cli/commands/daemon.ts). The
 * options of `run` are one table, read twice: by yargs here, and by src/cli/gate.ts's fast path, which runs
 * `gate daemon run` as the autostart spawns it without loading yargs (a gate-sh's first run waits for it).
 * Pure.
 */
import type { Argv } from 'yargs';
import { type Args, type CommandSpec, flag, list, str } from './spec.js';

type Kind = 'string' | 'list' | 'flag';

/** The session settings a daemon starts with (run, start, restart): option → [kind, what it does]. */
export const START_OPTIONS: Record<string, [Kind, string]> = {
  'approval-policy': ['string', 'untrusted | on-failure | on-request | never | JSON {"reject":{...}}'],
  sandbox: ['string', 'read-only | workspace-write | danger-full-access | external-sandbox'],
  'approval-timeout-ms': ['string', 'how long a prompt waits for an attached approver'],
  rules: ['list', 'extra rule file (repeatable)'],
};

/** `gate daemon run`'s own options. */
export const RUN_OPTIONS: Record<string, [Kind, string]> = {
  ...START_OPTIONS,
  'no-terminal': ['flag', 'do not use this terminal as an approver'],
  'warm-up': ['string', 'scripts decided once idle to warm the parsers (default 400; 0: none, for a short-lived daemon)'],
  'test-resolver': ['string', '(tests only) resolve names through FILE, a JSON map of names to loopback addresses, instead of DNS (docs/network.md)'],
};

/** Options, as declared here (what src/cli/commands/daemon.ts runs with). */
export interface DaemonArgs {
  sub: 'run' | 'start' | 'stop' | 'restart' | 'status';
  'approval-policy'?: string;
  sandbox?: string;
  'approval-timeout-ms'?: string;
  rules?: string[];
  'no-terminal'?: boolean;
  'warm-up'?: string;
  'test-resolver'?: string;
  force?: boolean;
  json?: boolean;
}

function declare(y: Argv, table: Record<string, [Kind, string]>): Argv {
  for (const [name, [kind, describe]] of Object.entries(table))
    y.option(name, kind === 'flag' ? flag(describe) : kind === 'list' ? list(describe) : str(describe));
  return y;
}

const FORCE = 'stop even while runs or background jobs are active (each run it ends says so on its stderr)';

function args(sub: DaemonArgs['sub'], a: Args): DaemonArgs {
  const out: DaemonArgs = { sub };
  for (const k of ['approval-policy', 'sandbox', 'approval-timeout-ms', 'warm-up', 'test-resolver'] as const) if (typeof a[k] === 'string') out[k] = a[k] as string;
  if (Array.isArray(a.rules)) out.rules = a.rules as string[];
  for (const k of ['no-terminal', 'force', 'json'] as const) if (a[k] === true) out[k] = true;
  return out;
}

const run = (sub: DaemonArgs['sub']) => async (a: Args, ctx: { load(n: string): Promise<unknown> }) =>
  ((await ctx.load('daemon')) as typeof import('../commands/daemon.js')).run(args(sub, a));

export const daemon: CommandSpec = {
  command: 'daemon',
  describe: 'run, start, stop or inspect the escalation daemon',
  usage: 'usage: gate daemon <run|start|stop|restart|status> [options]',
  epilogue: "Rule files are reloaded by themselves; 'gate reload' reloads them now.",
  subcommands: [
    {
      command: 'run',
      describe: 'run in the foreground (this terminal answers prompts when it is a TTY)',
      usage: 'usage: gate daemon run [options]',
      builder: (y) => declare(y, RUN_OPTIONS),
      run: run('run'),
    },
    {
      command: 'start',
      describe: 'start in the background (logs to <session dir>/daemon.log); returns once it answers',
      usage: 'usage: gate daemon start [options]',
      builder: (y) => declare(y, START_OPTIONS),
      run: run('start'),
    },
    {
      command: 'stop',
      describe: "stop the session's daemon; refused while runs or background jobs are active, unless --force",
      usage: 'usage: gate daemon stop [--force]',
      builder: (y) => y.option('force', flag(FORCE)),
      run: run('stop'),
    },
    {
      command: 'restart',
      describe: 'stop, then start in the background with this environment (picks up config.toml, GATE_* settings)',
      usage: 'usage: gate daemon restart [--force] [options]',
      builder: (y) => declare(y, START_OPTIONS).option('force', flag(FORCE)),
      run: run('restart'),
    },
    {
      command: 'status',
      describe: "same as 'gate status'",
      usage: 'usage: gate daemon status [--json]',
      builder: (y) => y.option('json', flag('one JSON object')),
      run: run('status'),
    },
  ],
};
