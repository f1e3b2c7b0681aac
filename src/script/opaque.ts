/** Programs that hide what they run: a command string, a remote shell, a script, inline code. */

/** Programs that run commands we cannot see (a command string, a remote shell, a script). */
const OPAQUE: Record<string, string> = {
  eval: 'evaluates a string as a script',
  source: 'runs a script file in this shell',
  '.': 'runs a script file in this shell',
  su: 'runs a shell as another user',
  ssh: 'runs a remote command',
  watch: 'runs a command string',
  parallel: 'runs command strings',
  flock: 'runs a command or command string',
  script: 'runs a command string',
  busybox: 'runs applets and shells',
  fish: 'runs a shell',
  tcsh: 'runs a shell',
  csh: 'runs a shell',
  chroot: 'runs a command in another root',
  setsid: 'runs a command',
  taskset: 'runs a command',
  ionice: 'runs a command',
  chrt: 'runs a command',
  unshare: 'runs a command',
  nsenter: 'runs a command',
  runuser: 'runs a command as another user',
  pkexec: 'runs a command as another user',
  strace: 'runs a command',
  ltrace: 'runs a command',
  fakeroot: 'runs a command',
  'systemd-run': 'runs a command',
  'start-stop-daemon': 'runs a command',
  expect: 'runs a script',
  tmux: 'runs command strings',
  screen: 'runs commands',
  xterm: 'runs a command',
};

/** Interpreters given code on the command line (`python3 -c`, `perl -e`, `node -e`): the code is opaque. */
const INLINE_CODE: [RegExp, string[]][] = [
  [/^python[0-9.]*$/, ['-c']],
  [/^(perl|ruby|lua[0-9.]*|osascript)$/, ['-e', '-E']],
  [/^(node|nodejs|bun)$/, ['-e', '--eval', '-p', '--print']],
  [/^php$/, ['-r']],
];

function inlineCode(name: string, argv: string[]): string | undefined {
  for (const [re, flags] of INLINE_CODE) {
    if (!re.test(name)) continue;
    if (argv.slice(1).some((a) => flags.includes(a) || flags.some((f) => f.length === 2 && a.startsWith('-') && !a.startsWith('--') && a.includes(f[1]))))
      return 'runs code given on the command line';
  }
  return undefined;
}

/** Why running `argv` (whose program is `name`) hides execution, if it does. */
export function opaqueReason(name: string, argv: string[]): string | undefined {
  const why = (Object.hasOwn(OPAQUE, name) ? OPAQUE[name] : undefined) ?? inlineCode(name, argv);
  return why === undefined ? undefined : `${name} ${why}`;
}
