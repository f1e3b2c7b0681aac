/**
 * `gate`'s command line on yargs: the program built from every command's declaration (src/cli/args/), with
 * generated help per command (`gate <cmd> --help`, `gate help <cmd>`), strict options (an unknown option,
 * a missing or invalid value: `gate: ...`, the command's help, exit 2), "did you mean" for a mistyped
 * command, `gate --version`/`-v`/`version`, and `gate completion bash|zsh|fish`. Loaded by src/cli/gate.ts
 * only for the commands a person types (its bundle, dist/cjs-src/cli/gate-cli.bundle.cjs, has yargs in
 * it): gate-sh, `gate hook` and the daemon's autostart never load it. A command's own code is loaded only
 * when it runs (Context.load). Not pure (prints, runs the command); no trust boundary: the arguments are the
 * caller's own.
 */
import { fileURLToPath } from 'node:url';
import yargs, { type Argv } from 'yargs';
import { COMMANDS } from './args/index.js';
import { type Args, type CommandSpec, type Context, PARSER, UsageError } from './args/spec.js';
import { completionScript, SHELLS, type CompletionShell } from './completion-scripts.js';
import { errorLine } from './errors.js';
import { versionLine } from './version.js';

/** bin/gate: two folders up from dist/src/cli/ or dist/cjs-src/cli/ (the bundle), then bin/. */
const GATE_BIN = fileURLToPath(new URL('../../../bin/gate', import.meta.url));

/** A usage error as yargs reports it (a check, a coerce or its own validation), with the help to show. */
class Misuse extends Error {
  constructor(
    message: string,
    readonly help: string,
  ) {
    super(message);
  }
}

/** The words of argv that name a command and its subcommands ('policy amend'), for messages. */
function commandPath(argv: readonly string[]): string[] {
  if (['completion', 'help', 'version'].includes(argv[0])) return [argv[0]];
  const path: string[] = [];
  let level: readonly CommandSpec[] = COMMANDS;
  for (const w of argv) {
    const spec = level.find((c) => c.command.split(' ')[0] === w);
    if (!spec) break;
    path.push(w);
    level = spec.subcommands ?? [];
  }
  return path;
}

/** Whether the command at `path` (the top level when empty) is followed by a subcommand's name. */
function takesCommand(path: readonly string[]): boolean {
  let level: readonly CommandSpec[] = COMMANDS;
  for (const w of path) level = level.find((c) => c.command.split(' ')[0] === w)?.subcommands ?? [];
  return level.length > 0;
}

/** Run one command's code: its exit status; an error it throws is `gate: <message>`, exit 1. */
async function guarded(f: () => Promise<number>): Promise<number> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof UsageError) throw e;
    process.stderr.write(errorLine(e));
    if (process.env.GATE_DEBUG) console.error(e);
    return 1;
  }
}

/** Declare one command (and its subcommands) on `y`; its handler stores the exit status in `result`. */
function declare(y: Argv, spec: CommandSpec, ctx: Context, result: { code: number }): Argv {
  const name = spec.command.split(' ')[0];
  return y.command(
    spec.command,
    spec.describe,
    (sub: Argv) => {
      sub.usage(spec.usage);
      if (spec.epilogue) sub.epilogue(spec.epilogue);
      spec.builder?.(sub);
      for (const s of spec.subcommands ?? []) declare(sub, s, ctx, result);
      if (spec.subcommands && !spec.run) sub.demandCommand(1, `name a ${name} command: ${spec.subcommands.map((s) => s.command.split(' ')[0]).join(', ')}`);
      return sub;
    },
    spec.run
      ? async (a: Record<string, unknown>) => {
          result.code = await guarded(() => spec.run!(a as Args, ctx));
        }
      : undefined,
  );
}

/** The program: every command, `help`, `version`, `completion`; what it runs leaves its status in `result`. */
function program(argv: readonly string[], ctx: Context, result: { code: number }): Argv {
  const y = yargs([...argv])
    .scriptName('gate')
    .locale('en')
    .parserConfiguration(PARSER)
    .usage('usage: gate <command> [options]')
    .epilogue(
      "'gate help <command>' (or 'gate <command> --help') shows a command's options; 'gate completion bash|zsh|fish' prints a " +
        'completion script. gate-sh itself is the shell: gate-sh --help.',
    )
    .version(false)
    .option('version', { alias: 'v', type: 'boolean', describe: "gate-sh's version", global: false })
    .help('help', 'this help')
    .alias('help', 'h')
    .strict()
    .recommendCommands()
    .demandCommand(1, 'name a command')
    .exitProcess(false)
    .wrap(Math.min(110, process.stdout.columns || 110))
    .fail((msg: string | null, err: Error | undefined, usage: unknown) => {
      // every failure that reaches here is a misuse (a command's own errors are caught in guarded())
      throw new Misuse(msg ?? err?.message ?? 'invalid arguments', (usage as { help(): string }).help());
    });
  for (const spec of COMMANDS) declare(y, spec, ctx, result);
  y.command(
    'completion [shell]',
    'print a completion script for bash, zsh or fish',
    (sub: Argv) =>
      sub
        .usage('usage: gate completion [bash|zsh|fish]')
        .epilogue(
          'bash: gate completion bash >> ~/.bashrc\nzsh:  gate completion zsh >> ~/.zshrc\n' +
            'fish: gate completion fish > ~/.config/fish/completions/gate.fish\nWithout a shell: the one $SHELL names (else bash).',
        )
        .positional('shell', { type: 'string', choices: [...SHELLS], describe: 'the shell' }),
    (a: Record<string, unknown>) => {
      const named = /(bash|zsh|fish)$/.exec(process.env.SHELL ?? '')?.[1];
      process.stdout.write(completionScript(((a.shell as string | undefined) ?? named ?? 'bash') as CompletionShell, GATE_BIN));
      result.code = 0;
    },
  );
  y.command('help [command..]', "a command's help ('gate help status')", (sub: Argv) => sub.usage('usage: gate help [COMMAND...]'), () => undefined);
  y.command('version', "gate-sh's version (also -v, --version)", (sub: Argv) => sub.usage('usage: gate version'), () => {
    process.stdout.write(versionLine());
    result.code = 0;
  });
  return y;
}

/** The words yargs offers for a partly typed command line (`words` as the shell has them, `gate` first). */
async function completions(words: string[], ctx: Context): Promise<number> {
  // the format: zsh and fish take descriptions; yargs reads the shell from SHELL, which may be another one
  const shell = process.env.GATE_COMPLETION_SHELL;
  process.env.SHELL = shell === 'zsh' || shell === 'fish' ? shell : 'bash';
  delete process.env.ZSH_NAME;
  // yargs answers in its parse (so a command's own options and subcommands are offered too), printing them
  await program(['--get-yargs-completions', ...words], ctx, { code: 0 }).parseAsync();
  return 0;
}

/** Run `gate ARGV...` (the words after `gate`): the exit status. */
export async function runGate(argv: readonly string[], ctx: Context): Promise<number> {
  if (argv[0] === '--get-yargs-completions') return completions(argv.slice(1), ctx);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    process.stdout.write(versionLine());
    return 0;
  }
  // `gate help status` is `gate status --help`; `gate help` the top-level help
  let words = argv;
  if (argv[0] === 'help') {
    const known = [...COMMANDS.map((c) => c.command.split(' ')[0]), 'completion', 'help', 'version'];
    // an unknown name: reported as the command would be ("did you mean")
    words = argv.length === 1 || known.includes(argv[1]) ? [...argv.slice(1), '--help'] : argv.slice(1);
  }
  const result = { code: 0 };
  try {
    await program(words, ctx, result).parseAsync();
    return result.code;
  } catch (e) {
    if (!(e instanceof Misuse) && !(e instanceof UsageError)) throw e;
    const path = commandPath(words);
    let message = e.message;
    // yargs' suggestion alone does not say what was wrong
    const mistyped = words[path.length];
    if (/^Did you mean /.test(message)) message = `unknown command '${mistyped}'. ${message}`;
    else if (path.length === 0 && mistyped?.startsWith('-')) message = `unknown option '${mistyped}'`;
    else if (/^Unknown argument: /.test(message) && mistyped === message.slice('Unknown argument: '.length) && takesCommand(path))
      message = path.length ? `unknown ${path.join(' ')} command '${mistyped}'` : `unknown command '${mistyped}'`;
    // a command's usage after its misuse; the whole command list only when no command was named at all
    const help = !(e instanceof Misuse) ? '' : path.length || words.length === 0 ? e.help : "run 'gate --help' for the commands";
    process.stderr.write(`gate: ${path.length ? `${path.join(' ')}: ` : ''}${message}\n${help ? `\n${help}\n` : ''}`);
    return 2;
  }
}
