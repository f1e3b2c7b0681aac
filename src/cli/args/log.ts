/** `gate log`: declaration (the command: src/cli/commands/log.ts). Pure. */
import { parseSince } from '../../client/index.js';
import { type CommandSpec, count, flag, last, oneOf, str } from './spec.js';

/** What --decision filters on: a record's decision, or the start of its action (case does not matter). */
export const LOG_DECISIONS = ['allow', 'prompt', 'forbidden', 'run', 'deny', 'escalate'] as const;

export const log: CommandSpec = {
  command: 'log',
  describe: 'read the audit log',
  usage: 'usage: gate log [--follow] [--json] [--run ID] [--kind K] [--decision D] [--since 10m|ISO] [-n N] [--file PATH]',
  epilogue: 'One line per audit record (a decision, a run, a reuse); --json prints the records as they are stored (JSONL).',
  builder: (y) =>
    y
      .option('follow', flag('keep printing records as they are written', { alias: 'f' }))
      .option('json', flag('the records as JSON lines'))
      .option('run', str('only the records of this run id'))
      .option('kind', str('only records of this kind: decision, exec, run, network, config, reload, daemon, job'))
      .option('decision', oneOf('only records with this decision or action', LOG_DECISIONS, { coerce: (v: unknown) => String(last(v)).toLowerCase() }))
      .option('since', str('only records since an ISO time or an age (30s, 10m, 2h, 1d)', { coerce: (v: unknown) => parseSince(String(last(v))) }))
      .option('n', count('only the last N records'))
      .option('file', str('read this audit log instead of the configured one')),
  run: async (a, ctx) =>
    ((await ctx.load('log')) as typeof import('../commands/log.js')).run({
      follow: a.follow === true,
      json: a.json === true,
      run: a.run as string | undefined,
      kind: a.kind as string | undefined,
      decision: a.decision as string | undefined,
      since: a.since as number | undefined,
      n: a.n as number | undefined,
      file: a.file as string | undefined,
    }),
};
