/**
 * The shape of one `gate` command's declaration for yargs (src/cli/gate-cli.ts builds the program from
 * them), and the option helpers every declaration uses, so that all commands parse alike: a string option
 * needs its value (the last one wins when it is given twice), a list option is repeated, and a value a
 * command cannot use is a usage error (exit 2). A declaration imports nothing at run time but this file:
 * the command's code is loaded only when the command runs (Context.load), so `gate --help` and completion
 * do not load the daemon. Pure: no I/O here.
 */
import type { Argv, Options } from 'yargs';

/** What a command's declaration gets from the dispatcher (src/cli/gate.ts). */
export interface Context {
  /** the command's module (src/cli/commands/<name>.js, or its bundle), loaded on first use */
  load(name: string): Promise<unknown>;
  /** the words after `gate`, as given (for a command that keeps its own parser: `gate policy check`) */
  argv: readonly string[];
}

/** Parsed options: yargs' argv, keys as spelled on the command line. */
export type Args = Record<string, unknown> & { _: (string | number)[]; '--'?: string[] };

export interface CommandSpec {
  /** yargs' command string: the name, then its positionals (`config get [key]`) */
  command: string;
  /** one line for `gate --help`'s command list */
  describe: string;
  /** the usage line(s) at the top of the command's help, then what the options do not say */
  usage: string;
  epilogue?: string;
  /** options, positionals, checks; subcommands are declared in `subcommands` */
  builder?(y: Argv): Argv;
  subcommands?: CommandSpec[];
  /** the exit status; absent for a command that needs a subcommand */
  run?(args: Args, ctx: Context): Promise<number>;
}

/** How every command's words are parsed (yargs-parser's configuration; a command that changes one setting
 * passes the whole object again: yargs replaces it, it does not merge). */
export const PARSER = {
  // `--` ends the options; what follows is a command's words (argv['--'])
  'populate--': true,
  // `--no-terminal`, `--no-default-rules` are options of their own, not negations
  'boolean-negation': false,
  // words stay strings: `gate explain 1` explains the script "1"
  'parse-numbers': false,
  'parse-positional-numbers': false,
  // `--rules A --rules B`: one value per flag
  'greedy-arrays': false,
  'dot-notation': false,
  'camel-case-expansion': false,
} as const;

/** ... for a command whose trailing words are another command's (`gate rules add --forbid git push --force`):
 * an option gate does not know is one of those words. */
export const PARSER_TRAILING = { ...PARSER, 'unknown-options-as-args': true } as const;

/** A usage error found after yargs parsed (a value it cannot check by itself): exit 2 with the command's help. */
export class UsageError extends Error {}

/** An option's value when it was given more than once: the last one. */
export const last = (v: unknown): unknown => (Array.isArray(v) ? v[v.length - 1] : v);

/** A string option that needs its value; given twice, the last one holds. */
export function str(describe: string, extra: Options = {}): Options {
  return { type: 'string', requiresArg: true, describe, coerce: last, ...extra };
}

/** A string option given once per value (`--rules A --rules B`). */
export function list(describe: string, extra: Options = {}): Options {
  return { type: 'string', array: true, requiresArg: true, describe, ...extra };
}

export function flag(describe: string, extra: Options = {}): Options {
  return { type: 'boolean', describe, coerce: (v: unknown) => last(v) === true, ...extra };
}

/** A string option whose value must be one of `values` (yargs names them when it is not). */
export function oneOf(describe: string, values: readonly string[], extra: Options = {}): Options {
  return str(describe, { choices: [...values], ...extra });
}

/** A whole number option (`-n 20`); anything else is a usage error. */
export function count(describe: string, extra: Options = {}): Options {
  return str(describe, {
    coerce: (v: unknown) => {
      const s = String(last(v));
      if (!/^\d+$/.test(s)) throw new UsageError(`'${s}' is not a whole number`);
      return Number(s);
    },
    ...extra,
  });
}

/**
 * The words of a trailing command (PARSER_TRAILING): positionals, then whatever follows `--`. Its first word
 * may not look like an option (`gate policy amend --bogus` is a mistyped option, not a prefix; after `--` it
 * may): as clap reads Codex's.
 */
export function prefixWords(args: Args, key: string): string[] {
  const own = args[key];
  const first = Array.isArray(own) ? own[0] : own;
  if (typeof first === 'string' && first.startsWith('-') && first !== '-') throw new UsageError(`unknown option '${first}' (a prefix starting with it goes after --)`);
  return trailing(args, key);
}

/** The words of a trailing command: positionals, then whatever follows `--`. */
export function trailing(args: Args, key: string): string[] {
  const own = args[key];
  return [...(Array.isArray(own) ? own.map(String) : own === undefined ? [] : [String(own)]), ...(args['--'] ?? []).map(String)];
}
