/**
 * Programs that hand a command to something that runs it elsewhere — a server outside the run (tmux,
 * screen), another machine or container (ssh, docker/podman exec and run, kubectl exec), the service
 * manager (systemd-run), a scheduler (at, batch, crontab). The exec gate never sees those execs, so what
 * they will run is read from their own argv here and decided as if the run made it, at pre-flight and at
 * exec time alike (`tmux send-keys 'rm ...' Enter` typed into the user's own shell). Pure.
 *
 * Trust boundary: the argv is the agent's (untrusted). Whatever cannot be read from it — commands on
 * stdin or in a file, a shell opened with no command, an image's own entry point — is `hidden`, so the
 * caller never treats it as seen.
 */
import { basename } from 'node:path';
import type { Hidden } from './types.js';

/** What a program that runs commands elsewhere will run, as far as its argv says. */
export interface Elsewhere {
  /** shell text it will run (a command string, keys typed into a shell) */
  scripts: string[];
  /** argvs it will run directly */
  argvs: string[][];
  /** what it runs that its argv does not say */
  hidden?: Hidden;
}

/** Option words of one command: which short letters and long names take a value. */
interface Opts {
  short?: string;
  long?: string[];
}

/** Index of the first operand after options (`--` ends them), or argv.length. */
function operands(argv: readonly string[], from: number, o: Opts): number {
  let i = from;
  for (; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') return i + 1;
    if (a.startsWith('--') && a.length > 2) {
      if (o.long?.includes(a) && !a.includes('=')) i++;
      continue;
    }
    if (a.startsWith('-') && a.length > 1) {
      for (let k = 1; k < a.length; k++)
        if (o.short?.includes(a[k])) {
          if (k === a.length - 1) i++;
          break;
        }
      continue;
    }
    break;
  }
  return i;
}

const has = (argv: readonly string[], from: number, to: number, flag: string): boolean =>
  argv.slice(from, to).some((a) => a === flag || (flag.length === 2 && /^-[A-Za-z]+$/.test(a) && a.includes(flag[1])));

const none = (): Elsewhere => ({ scripts: [], argvs: [] });
const hiddenAs = (text: string): Elsewhere => ({ scripts: [], argvs: [], hidden: { kind: 'command-string', text } });

/** One command given as words: a single word is shell text, several are an argv (tmux, systemd-run). */
function commandWords(words: string[], into: Elsewhere): void {
  if (words.length === 1) into.scripts.push(words[0]);
  else if (words.length > 1) into.argvs.push(words);
}

function merge(into: Elsewhere, more: Elsewhere): void {
  into.scripts.push(...more.scripts);
  into.argvs.push(...more.argvs);
  into.hidden ??= more.hidden;
}

// ---- tmux ----

/** tmux commands that run a shell command, with their value-taking options and the operand that is one. */
const TMUX_SHELL: Record<string, Opts> = {
  'new-session': { short: 'cefFnstxy' },
  'new-window': { short: 'cefFnt' },
  'split-window': { short: 'ceFlpt' },
  'respawn-pane': { short: 'cet' },
  'respawn-window': { short: 'cet' },
  'display-popup': { short: 'bcdehsStTwxy' },
  'pipe-pane': { short: 't' },
  'run-shell': { short: 'cdt' },
};
const TMUX_ALIASES: Record<string, string> = {
  new: 'new-session', neww: 'new-window', splitw: 'split-window', respawnp: 'respawn-pane', respawnw: 'respawn-window',
  popup: 'display-popup', pipep: 'pipe-pane', run: 'run-shell', if: 'if-shell', send: 'send-keys', source: 'source-file',
  bind: 'bind-key', confirm: 'confirm-before', set: 'set-option', setw: 'set-window-option',
};
/** Key names send-keys turns into characters a shell reads. */
const TMUX_KEYS: Record<string, string> = { Enter: '\n', 'C-m': '\n', 'C-j': '\n', KPEnter: '\n', Space: ' ', Tab: '\t', 'C-i': '\t' };

/** tmux's argv: global options, then commands separated by `;` words (or a word ending in an unescaped `;`). */
function tmux(argv: string[], depth = 0): Elsewhere {
  const out = none();
  let i = 1;
  if (depth === 0) {
    i = operands(argv, 1, { short: 'cfLST' });
    const c = argv.slice(1, i).findIndex((a) => /^-[2CDlNuvV]*c$/.test(a));
    if (c >= 0 && argv[c + 2] !== undefined) out.scripts.push(argv[c + 2]); // `tmux -c 'shell-command'`
  }
  let cmd: string[] = [];
  const flush = () => {
    if (cmd.length) merge(out, tmuxCommand(cmd, depth));
    cmd = [];
  };
  for (const w of argv.slice(i)) {
    if (w === ';') flush();
    else if (w.endsWith(';') && !w.endsWith('\\;')) {
      cmd.push(w.slice(0, -1));
      flush();
    } else cmd.push(w);
  }
  flush();
  return out;
}

/** One tmux command (name and arguments). */
function tmuxCommand(words: string[], depth: number): Elsewhere {
  const name = TMUX_ALIASES[words[0]] ?? words[0];
  const sub = (text: string): Elsewhere => (depth > 4 ? hiddenAs('tmux commands nested too deeply') : tmux(['tmux', ...tmuxWords(text)], depth + 1));
  const out = none();
  if (Object.hasOwn(TMUX_SHELL, name)) {
    const at = operands(words, 1, TMUX_SHELL[name]);
    // run-shell -C runs a tmux command, not a shell command
    if (name === 'run-shell' && has(words, 1, at, '-C')) return words[at] === undefined ? out : sub(words[at]);
    commandWords(words.slice(at), out);
    if (at >= words.length && name !== 'pipe-pane') out.hidden = { kind: 'command-string', text: `tmux ${name} runs the default command or shell` };
    return out;
  }
  switch (name) {
    case 'if-shell': {
      const at = operands(words, 1, { short: 't' });
      if (!has(words, 1, at, '-F') && words[at] !== undefined) out.scripts.push(words[at]);
      for (const c of words.slice(at + 1, at + 3)) merge(out, sub(c));
      return out;
    }
    case 'send-keys': {
      const at = operands(words, 1, { short: 'cNt' });
      if (has(words, 1, at, '-X')) return out; // copy-mode commands, not typed
      if (has(words, 1, at, '-H')) return hiddenAs('tmux send-keys -H types keys given in hex');
      const literal = has(words, 1, at, '-l');
      const text = words
        .slice(at)
        .map((k) => (!literal && Object.hasOwn(TMUX_KEYS, k) ? TMUX_KEYS[k] : k))
        .join('');
      if (text) out.scripts.push(text);
      return out;
    }
    case 'bind-key':
    case 'confirm-before':
    case 'command-prompt':
    case 'set-hook': {
      // the command they keep runs later, on a key, an answer or an event: decided now
      const opts: Opts = name === 'bind-key' ? { short: 'NTt' } : name === 'set-hook' ? { short: 't' } : { short: 'cIptT' };
      const at = operands(words, 1, opts);
      const rest = words.slice(at + (name === 'bind-key' || name === 'set-hook' ? 1 : 0));
      if (rest.length === 1) merge(out, sub(rest[0]));
      else if (rest.length > 1) merge(out, tmuxCommand(rest, depth + 1));
      return out;
    }
    case 'set-option':
    case 'set-window-option': {
      const at = operands(words, 1, { short: 't' });
      const [option, value] = [words[at], words[at + 1]];
      if (value === undefined) return out;
      if (option === 'default-command') out.scripts.push(value);
      else if (option === 'default-shell') out.argvs.push([value]);
      else if (option?.includes('hook') || /^(after|client|pane|session|window|alert)-/.test(option ?? '')) merge(out, sub(value));
      return out;
    }
    case 'source-file':
      return hiddenAs('tmux source-file runs the tmux commands of a file');
    default:
      return out;
  }
}

/** A tmux command string split into words as tmux reads it (shell-like quoting; `\;` kept as `;`). */
function tmuxWords(text: string): string[] {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  let q: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (q) {
      if (c === q) q = null;
      else if (c === '\\' && q === '"' && i + 1 < text.length) cur += text[++i];
      else cur += c;
    } else if (c === "'" || c === '"') {
      q = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < text.length) {
      cur += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
    } else {
      cur += c;
      inWord = true;
    }
  }
  if (inWord) words.push(cur);
  return words;
}

// ---- screen ----

/** screen's text escapes in `stuff`: ^M, \n, \r, \015 as a shell would receive them. */
function screenText(s: string): string {
  return s
    .replace(/\^[Mm]|\\r|\\n|\\015|\\012/g, '\n')
    .replace(/\^[Ii]|\\t/g, '\t');
}

function screen(argv: string[]): Elsewhere {
  const out = none();
  const at = operands(argv, 1, { short: 'cehpsStTX' });
  const x = argv.slice(1, at).indexOf('-X');
  if (x >= 0) {
    // screen -X CMD ARGS: a screen command sent to a running session (outside the run)
    const words = argv.slice(x + 2);
    if (words[0] === 'stuff' && words.length > 1) out.scripts.push(screenText(words.slice(1).join(' ')));
    else if (words[0] === 'exec') {
      const rest = words.slice(1);
      commandWords(/^[.!:|]*$/.test(rest[0] ?? 'x') ? rest.slice(1) : rest, out);
    } else if (words[0] === 'screen') merge(out, screen(['screen', ...words.slice(1)]));
    else if (['source', 'eval', 'at', 'bind', 'register', 'paste'].includes(words[0] ?? ''))
      out.hidden = { kind: 'command-string', text: `screen -X ${words[0]} runs screen commands or text not read here` };
    return out;
  }
  // attaching, listing, wiping: no new command
  if (argv.slice(1, at).some((a) => /^-(r|x|R|ls|list|wipe|v|version|h|help)$/.test(a) || /^-[dD][rR]$/.test(a))) return out;
  if (at < argv.length) out.argvs.push(argv.slice(at));
  else out.hidden = { kind: 'shell', text: 'screen opens a shell' };
  return out;
}

// ---- ssh ----

function ssh(argv: string[]): Elsewhere {
  const out = none();
  const at = operands(argv, 1, { short: 'BbcDEeFIiJLlmOoPpQRSWw' });
  if (has(argv, 1, at, '-N') || has(argv, 1, at, '-G') || has(argv, 1, at, '-V') || argv.slice(1, at).includes('-O')) return out;
  const words = argv.slice(at + 1); // after the destination
  if (has(argv, 1, at, '-s')) return hiddenAs(`ssh runs the remote subsystem ${words[0] ?? ''}`.trim());
  // the remote shell reads the words joined by spaces
  if (words.length) out.scripts.push(words.join(' '));
  else out.hidden = { kind: 'remote', text: 'ssh opens a remote shell' };
  return out;
}

// ---- containers ----

const DOCKER_GLOBAL: Opts = { short: 'cHl', long: ['--config', '--context', '--host', '--log-level', '--tlscacert', '--tlscert', '--tlskey'] };
const DOCKER_EXEC: Opts = { short: 'euw', long: ['--detach-keys', '--env', '--env-file', '--user', '--workdir'] };
const DOCKER_RUN: Opts = {
  short: 'acehlmpuvw',
  long: [
    '--add-host', '--annotation', '--attach', '--blkio-weight', '--cap-add', '--cap-drop', '--cgroup-parent', '--cgroupns', '--cidfile',
    '--cpu-period', '--cpu-quota', '--cpu-shares', '--cpus', '--cpuset-cpus', '--cpuset-mems', '--device', '--dns', '--dns-option',
    '--dns-search', '--domainname', '--entrypoint', '--env', '--env-file', '--expose', '--gpus', '--group-add', '--health-cmd',
    '--health-interval', '--health-retries', '--health-start-period', '--health-timeout', '--hostname', '--ip', '--ip6', '--ipc',
    '--isolation', '--label', '--label-file', '--link', '--log-driver', '--log-opt', '--mac-address', '--memory', '--memory-reservation',
    '--memory-swap', '--mount', '--name', '--network', '--net', '--network-alias', '--pid', '--platform', '--publish', '--pull',
    '--restart', '--runtime', '--security-opt', '--shm-size', '--stop-signal', '--stop-timeout', '--storage-opt', '--sysctl',
    '--tmpfs', '--ulimit', '--user', '--userns', '--uts', '--volume', '--volumes-from', '--workdir',
  ],
};

function longValue(argv: readonly string[], from: number, to: number, name: string): string | undefined {
  for (let i = from; i < to; i++) {
    if (argv[i] === name) return argv[i + 1];
    if (argv[i].startsWith(`${name}=`)) return argv[i].slice(name.length + 1);
  }
  return undefined;
}

function container(argv: string[]): Elsewhere {
  const out = none();
  let i = operands(argv, 1, DOCKER_GLOBAL);
  if (argv[i] === 'container') i++;
  const verb = argv[i];
  if (verb === 'exec') {
    const at = operands(argv, i + 1, DOCKER_EXEC);
    if (at + 1 < argv.length) out.argvs.push(argv.slice(at + 1)); // after the container: an argv, no shell
    return out;
  }
  if (verb === 'run' || verb === 'create') {
    const at = operands(argv, i + 1, DOCKER_RUN);
    const entry = longValue(argv, i + 1, at, '--entrypoint');
    const cmd = argv.slice(at + 1); // after the image
    if (entry !== undefined) out.argvs.push([entry, ...cmd]);
    else if (cmd.length) out.argvs.push(cmd);
    else out.hidden = { kind: 'remote', text: `${basename(argv[0])} ${verb} runs the image's own command` };
    const health = longValue(argv, i + 1, at, '--health-cmd');
    if (health !== undefined) out.scripts.push(health);
    return out;
  }
  return out;
}

function kubectl(argv: string[]): Elsewhere {
  const out = none();
  const verb = argv.findIndex((a, k) => k > 0 && (a === 'exec' || a === 'debug' || a === 'run'));
  if (verb < 0) return out;
  const dd = argv.indexOf('--', verb);
  if (dd >= 0 && dd + 1 < argv.length) out.argvs.push(argv.slice(dd + 1));
  else if (argv[verb] === 'exec') out.hidden = { kind: 'remote', text: 'kubectl exec with no command after --' };
  return out;
}

// ---- the service manager and schedulers ----

const SYSTEMD_RUN: Opts = {
  short: 'upEMH',
  long: [
    '--unit', '--property', '--description', '--slice', '--setenv', '--uid', '--gid', '--machine', '--host', '--working-directory', '--nice',
    '--service-type', '--on-active', '--on-boot', '--on-startup', '--on-unit-active', '--on-unit-inactive', '--on-calendar',
    '--on-timezone-change', '--on-clock-change', '--timer-property', '--path-property', '--socket-property', '--background',
  ],
};

function systemdRun(argv: string[]): Elsewhere {
  const out = none();
  const at = operands(argv, 1, SYSTEMD_RUN);
  if (argv.slice(1, at).some((a) => a === '--shell' || a === '-S')) return { ...out, hidden: { kind: 'shell', text: 'systemd-run --shell opens a shell' } };
  if (at < argv.length) out.argvs.push(argv.slice(at));
  return out;
}

function scheduler(argv: string[]): Elsewhere {
  const name = basename(argv[0]);
  // listing, removing, showing jobs run nothing new
  if (name === 'crontab') return argv.slice(1).some((a) => /^-[lr]$/.test(a)) ? none() : hiddenAs('crontab installs commands cron runs later, outside the run');
  if (name === 'atq' || name === 'atrm' || argv.slice(1).some((a) => /^-[lrdc]$/.test(a))) return none();
  return hiddenAs(`${name} runs commands it reads from stdin or a file later, outside the run`);
}

const RUNNERS: Record<string, (argv: string[]) => Elsewhere> = {
  tmux: (a) => tmux(a),
  screen,
  ssh,
  docker: container,
  podman: container,
  kubectl,
  'systemd-run': systemdRun,
  at: scheduler,
  batch: scheduler,
  atq: scheduler,
  atrm: scheduler,
  crontab: scheduler,
};

/** Whether `name` (a basename) hands commands to something outside the run. */
export function runsElsewhere(name: string): boolean {
  return Object.hasOwn(RUNNERS, name);
}

/** What `argv` (its program one of runsElsewhere's) will have run elsewhere; null for other programs. */
export function elsewhereOf(argv: readonly string[]): Elsewhere | null {
  const name = basename(argv[0] ?? '');
  return Object.hasOwn(RUNNERS, name) ? RUNNERS[name]([...argv]) : null;
}
