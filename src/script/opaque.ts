/** Programs that hide what they run: a command string, a remote shell, a script, inline code. */
import type { Hidden, OpaqueKind } from './types.js';

/** Programs that run commands we cannot see (a command string, a remote shell, a script). */
const OPAQUE: Record<string, [OpaqueKind, string]> = {
  eval: ['eval', 'evaluates a string as a script'],
  source: ['source', 'runs a script file in this shell'],
  '.': ['source', 'runs a script file in this shell'],
  su: ['shell', 'runs a shell as another user'],
  ssh: ['remote', 'runs a remote command'],
  watch: ['command-string', 'runs a command string'],
  parallel: ['command-string', 'runs command strings'],
  flock: ['command-string', 'runs a command or command string'],
  script: ['command-string', 'runs a command string'],
  busybox: ['shell', 'runs applets and shells'],
  fish: ['shell', 'runs a shell'],
  tcsh: ['shell', 'runs a shell'],
  csh: ['shell', 'runs a shell'],
  chroot: ['wrapper', 'runs a command in another root'],
  setsid: ['wrapper', 'runs a command'],
  unshare: ['wrapper', 'runs a command'],
  nsenter: ['wrapper', 'runs a command'],
  runuser: ['wrapper', 'runs a command as another user'],
  pkexec: ['wrapper', 'runs a command as another user'],
  strace: ['wrapper', 'runs a command'],
  ltrace: ['wrapper', 'runs a command'],
  fakeroot: ['wrapper', 'runs a command'],
  'systemd-run': ['wrapper', 'runs a command'],
  'start-stop-daemon': ['wrapper', 'runs a command'],
  expect: ['script-file', 'runs a script'],
  tmux: ['command-string', 'runs command strings'],
  screen: ['wrapper', 'runs commands'],
  xterm: ['wrapper', 'runs a command'],
};

/** Interpreters given code on the command line (`python3 -c`, `perl -e`, `node -e`): the code is opaque. */
const INLINE_CODE: [RegExp, string[]][] = [
  [/^python[0-9.]*$/, ['-c']],
  [/^(perl|ruby|lua[0-9.]*|osascript)$/, ['-e', '-E']],
  [/^(node|nodejs|bun)$/, ['-e', '--eval', '-p', '--print']],
  [/^php$/, ['-r']],
];

function inlineCode(name: string, argv: string[]): boolean {
  for (const [re, flags] of INLINE_CODE) {
    if (!re.test(name)) continue;
    if (argv.slice(1).some((a) => flags.includes(a) || flags.some((f) => f.length === 2 && a.startsWith('-') && !a.startsWith('--') && a.includes(f[1]))))
      return true;
  }
  return false;
}

/** What running `argv` (whose program is `name`) hides, if anything. */
export function opaqueProgram(name: string, argv: string[]): Hidden | undefined {
  if (Object.hasOwn(OPAQUE, name)) {
    const [kind, why] = OPAQUE[name];
    return { kind, text: `${name} ${why}` };
  }
  return inlineCode(name, argv) ? { kind: 'inline-code', text: `${name} runs code given on the command line` } : undefined;
}
