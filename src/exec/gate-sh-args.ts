/**
 * gate-sh's command line, parsed the way bash parses its own: long options first, then clusters of
 * single-letter options (`-lc`, `-ec`, `+x`, `-o pipefail`), then the command string (with -c), or a script
 * file, or nothing (script on stdin). Pure: no I/O, no dependencies (hot path).
 */

export type ScriptSource =
  | { kind: 'command'; script: string } // -c STRING
  | { kind: 'file'; path: string } // gate-sh FILE ARGS...
  | { kind: 'stdin' }; // -s, or no script argument

export interface ShellInvocation {
  source: ScriptSource;
  /** $0 for the script: -c's NAME, the script file, else gate-sh's own name */
  name: string;
  /** $1... */
  args: string[];
  login: boolean;
  /** -i was given explicitly */
  interactive: boolean;
  /** `set` options to pass to bash in order, e.g. ['-e', '-x', '-o', 'pipefail', '+u'] */
  setOptions: string[];
  /** `shopt` options for bash, e.g. ['-O', 'extglob'] */
  shoptOptions: string[];
  /** bash long options passed through (`--norc`, `--noprofile`, `--posix`, `--rcfile F`, ...) */
  longOptions: string[];
  /** --pty: host the script in a pseudo-terminal; --no-pty: never (default: when stdin and stdout are terminals) */
  pty?: boolean;
  /** --escalate / --with-permissions JSON / --justification TEXT: what this call asks of the sandbox
   * (src/exec/escalation-args.ts turns it into the pre-flight's fields) */
  escalation: { escalate?: boolean; withPermissions?: string; justification?: string };
  /** --sandbox MODE|JSON: run this call in at most this sandbox (the stricter of it and gate-sh's own) */
  sandbox?: string;
  /** --help / --version asked: print and exit, nothing runs */
  info?: 'help' | 'version';
}

export class ArgsError extends Error {}

/** Long options bash accepts; those taking a value are listed with true. */
const LONG: Record<string, boolean> = {
  '--noprofile': false,
  '--norc': false,
  '--posix': false,
  '--noediting': false,
  '--verbose': false,
  '--restricted': false,
  '--debugger': false,
  '--dump-strings': false,
  '--dump-po-strings': false,
  '--wordexp': false,
  '--protected': false,
  '--rcfile': true,
  '--init-file': true,
};

/** single-letter `set` options bash accepts at invocation (besides c, i, l, s, o, O handled apart) */
const SET_LETTERS = new Set('abefhkmnprtuvxBCDEHPT'.split(''));

export function parseShellArgs(argv: string[], argv0 = 'gate-sh'): ShellInvocation {
  const inv: ShellInvocation = {
    source: { kind: 'stdin' },
    name: argv0,
    args: [],
    login: false,
    interactive: false,
    setOptions: [],
    shoptOptions: [],
    longOptions: [],
    escalation: {},
  };
  let i = 0;
  // long options come first, as in bash
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--' || !a.startsWith('--')) break;
    if (a === '--login') inv.login = true;
    else if (a === '--help') inv.info = 'help';
    else if (a === '--pty') inv.pty = true;
    else if (a === '--no-pty') inv.pty = false;
    else if (a === '--version') inv.info = 'version';
    else if (a === '--escalate') inv.escalation.escalate = true;
    else if (a === '--with-permissions' || a === '--justification' || a === '--sandbox') {
      if (i + 1 >= argv.length) throw new ArgsError(`${a}: option requires an argument`);
      if (a === '--justification') inv.escalation.justification = argv[++i];
      else if (a === '--sandbox') inv.sandbox = argv[++i];
      else inv.escalation.withPermissions = argv[++i];
    }
    else if (Object.hasOwn(LONG, a)) {
      inv.longOptions.push(a);
      if (LONG[a]) {
        if (i + 1 >= argv.length) throw new ArgsError(`${a}: option requires an argument`);
        inv.longOptions.push(argv[++i]);
      }
    } else throw new ArgsError(`${a}: invalid option`);
  }
  let command = false;
  let readStdin = false;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--' || a === '-') {
      i++;
      break;
    }
    if (a.length < 2 || (a[0] !== '-' && a[0] !== '+')) break;
    const on = a[0] === '-';
    for (const ch of a.slice(1)) {
      if (ch === 'c' && on) command = true;
      else if (ch === 's' && on) readStdin = true;
      else if (ch === 'i' && on) inv.interactive = true;
      else if (ch === 'l' && on) inv.login = true;
      else if (ch === 'o' || ch === 'O') {
        if (i + 1 >= argv.length) throw new ArgsError(`-${ch}: option requires an argument`);
        (ch === 'o' ? inv.setOptions : inv.shoptOptions).push(`${a[0]}${ch}`, argv[++i]);
      } else if (SET_LETTERS.has(ch)) inv.setOptions.push(`${a[0]}${ch}`);
      else throw new ArgsError(`${a[0]}${ch}: invalid option`);
    }
  }
  const rest = argv.slice(i);
  if (command) {
    if (rest.length === 0) throw new ArgsError('-c: option requires an argument');
    inv.source = { kind: 'command', script: rest[0] };
    if (rest.length > 1) inv.name = rest[1];
    inv.args = rest.slice(2);
  } else if (readStdin || rest.length === 0) {
    inv.source = { kind: 'stdin' };
    inv.args = rest;
  } else {
    inv.source = { kind: 'file', path: rest[0] };
    inv.name = rest[0];
    inv.args = rest.slice(1);
  }
  return inv;
}

/** gate-sh's usage, laid out as `bash --help` lays out bash's, then gate-sh's own flags. */
export const USAGE = `Usage:	gate-sh [GNU long option] [option] ...
	gate-sh [GNU long option] [option] script-file ...
GNU long options (as bash):
	--help
	--init-file FILE
	--login
	--noediting
	--noprofile
	--norc
	--posix
	--rcfile FILE
	--restricted
	--verbose
	--version
Shell options (as bash):
	-ilrsD or -c command or -O shopt_option		(invocation only)
	-abefhkmnptuvxBCEHPT or -o option
gate-sh options (before the shell options):
	--pty, --no-pty		host the script in a pseudo-terminal, or never (default: when stdin and stdout are terminals)
	--escalate		ask to run this script outside the turn sandbox (a person decides; the prompt says so)
	--with-permissions JSON	ask for exactly these permissions instead, e.g.
				'{"network":false,"file_system":{"read":["."],"write":["./out"]}}' (paths against the cwd)
	--justification TEXT	why, shown in the approval prompt
	--sandbox MODE|JSON	run in at most this sandbox: read-only, workspace-write or a policy object
				(the stricter of it and gate-sh's own; it never widens gate-sh's own)
Every subcommand is checked by the gate daemon (started when none runs) before anything runs; then bash
runs the exact script. Type \`gate --help' for the daemon, approvals, rules and the audit log.`;
