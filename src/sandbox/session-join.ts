/**
 * Session sandboxes (docs/sandbox.md, "Session sandboxes"): what a gated run's plan becomes when it joins
 * the long-lived namespaces of its session sandbox instead of making its own, so that background jobs
 * outlive the command as under bash.
 *
 * A plan that can join is `gate-launch <bwrap> <options> -- <command>` (the sandbox step, then the exec
 * gate). Its sandbox is named by a key over the bubblewrap options that give access (every mount, the
 * network choice, the session flags; the run's own `--chdir` aside): two commands share a sandbox only when
 * they have exactly the same mounts, so a job of one, reached through /proc/<pid>/root by the other, grants
 * nothing the other did not have. A different policy, profile, working folder (a writable root under
 * workspace-write) or network setting is another key, another sandbox. Joining drops `--unshare-pid` and
 * `--unshare-net` (the holder's namespaces replace them: gate-launch enters them, docs/sandbox.md). The
 * holder builds the key's mounts once (`mounts`, with bubblewrap; never the host sockets' masks, which each
 * command mounts as it joins) and keeps them; gate-launch enters them instead of running bubblewrap, and the
 * plan keeps every mount option for when it cannot. Pure.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { type SessionJoin, SOCKET_MASK } from '../protocol/index.js';
import { BRIDGE_PROGRAM } from './network-bridge.js';
import type { CommandLine } from './wrap.js';

export type { SessionJoin };

/** What a run needs from the daemon to join: which sandbox, and whether it has a network of its own. */
export interface SessionShape {
  /** sha256 (hex) of the access-giving bubblewrap options */
  key: string;
  /** true: the holder makes a network namespace of its own (loopback only); false: the host's network */
  ownNetwork: boolean;
  /** bubblewrap and the options that build the sandbox's mounts, as the holder runs them once */
  mounts: string[];
}

/** The bubblewrap options of a gate-launch + bwrap plan (between bwrap and `--`), or null. */
function bwrapOptions(plan: CommandLine): { at: number; end: number } | null {
  if (basename(plan.program) !== 'gate-launch') return null;
  // gate-launch [--argv0 NAME] bwrap ...: a renamed program is an escalated command, never a gated run's bash
  if (plan.args[0]?.startsWith('--')) return null;
  if (basename(plan.args[0] ?? '') !== 'bwrap') return null;
  const end = plan.args.indexOf('--', 1);
  if (end < 0) return null;
  // a sandbox that already shares the host's pid namespace (none today) has nothing to join
  if (!plan.args.slice(1, end).includes('--unshare-pid')) return null;
  // network "rules": the run's own proxy and bridge (network-bridge.ts); a shared network namespace would
  // let one run's processes use another's bridge, and so its grants: each such run has a sandbox of its own
  if (basename(plan.args[end + 1] ?? '') === BRIDGE_PROGRAM) return null;
  return { at: 1, end };
}

/** Options of the plan's bubblewrap that are the command's own or the holder's, not the mounts'. */
const NOT_MOUNTS = new Set(['--unshare-pid', '--unshare-net', '--die-with-parent']);

/** The key of a sandbox with these mounts (bubblewrap first) and network choice. */
export function mountsKey(mounts: readonly string[], ownNetwork: boolean): string {
  // A protected entry that is missing (.git, .codex, a missing $CODEX_HOME) is blocked with an empty
  // read-only tmpfs, and bubblewrap leaves an empty folder behind on the host, which the next run binds
  // read-only instead (docs/sandbox.md): the same access (nothing writable there; reads are not what the
  // sandbox restricts in these places), so the same key — else a workspace's first command and its second
  // would never share a sandbox. The hidden runtime folder is a read-only tmpfs in every run alike.
  const remounted = new Set<string>();
  for (let i = 0; i < mounts.length - 1; i++) if (mounts[i] === '--remount-ro') remounted.add(mounts[i + 1]);
  const access: string[] = [ownNetwork ? 'network:own' : 'network:host'];
  for (let i = 0; i < mounts.length; i++) {
    if (mounts[i] === '--tmpfs' && remounted.has(mounts[i + 1])) {
      access.push('--ro-bind', mounts[i + 1], mounts[i + 1]);
      i++;
      continue;
    }
    if (mounts[i] === '--remount-ro') {
      i++;
      continue;
    }
    // a host socket masked one by one (src/sandbox/sockets.ts) takes nothing away that the key must tell
    // apart: sockets come and go on the host, and a new one must not part a command from its jobs' sandbox
    // (each command mounts the masks of its own plan as it joins: shims/gate-masks.h)
    if (mounts[i] === SOCKET_MASK.option && mounts[i + 1] === SOCKET_MASK.source) {
      i += 2;
      continue;
    }
    access.push(mounts[i]);
  }
  // NUL cannot be in an argv word: the join is unambiguous
  return createHash('sha256').update(access.join('\0')).digest('hex');
}

/**
 * Where bubblewrap options `opts` bind the run's own client folder (src/sandbox/bwrap-argv.ts requestDir:
 * `--ro-bind Q Q --tmpfs Q/c --bind Q/c/R Q/c/R`, one name R): the index of that `--bind`, or -1. Every run
 * has a folder of its own, so it is not part of a session sandbox's mounts (which runs of a key share): the
 * holder builds the clients' folder empty and read-only, and each command joining binds its own folder in
 * a mount namespace of its own (shims/gate-join.c looks for the same three options).
 */
export function runFolderBind(opts: readonly string[]): number {
  for (let i = 0; i + 7 < opts.length; i++) {
    if (opts[i] !== '--ro-bind' || opts[i + 3] !== '--tmpfs' || opts[i + 5] !== '--bind') continue;
    const q = opts[i + 1];
    const c = `${q}/c`;
    const r = opts[i + 6];
    if (opts[i + 2] !== q || opts[i + 4] !== c || opts[i + 7] !== r || !r.startsWith(`${c}/`)) continue;
    const name = r.slice(c.length + 1);
    if (name && !name.includes('/') && name !== '.' && name !== '..') return i + 5;
  }
  return -1;
}

/** Which session sandbox a plan joins, or null when it cannot join one (not wrapped in bubblewrap). */
export function sessionShape(plan: CommandLine): SessionShape | null {
  const o = bwrapOptions(plan);
  if (!o) return null;
  const opts = plan.args.slice(o.at, o.end);
  const mounts = [plan.args[0]];
  const own = runFolderBind(opts);
  for (let i = 0; i < opts.length; i++) {
    if (i === own) {
      i += 2; // the run's own client folder: each command's, not the sandbox's (runFolderBind)
      continue;
    }
    if (opts[i] === '--chdir') {
      i++; // where the command starts is not access: the mounts are
      continue;
    }
    // a host socket's mask is each command's, mounted as it joins (shims/gate-masks.h): sockets come and go
    // on the host, and a held mount over one that goes is detached, which changes the held mounts
    if (opts[i] === SOCKET_MASK.option && opts[i + 1] === SOCKET_MASK.source && i + 2 < opts.length) {
      i += 2;
      continue;
    }
    if (!NOT_MOUNTS.has(opts[i])) mounts.push(opts[i]);
  }
  const ownNetwork = opts.includes('--unshare-net');
  return { key: mountsKey(mounts, ownNetwork), ownNetwork, mounts };
}

/** The plan entering the holder's namespaces (gate-launch --session-ns), its mounts unchanged. */
export function joinPlan<T extends CommandLine>(plan: T, join: SessionJoin): T {
  const o = bwrapOptions(plan);
  if (!o) throw new Error('this plan cannot join a session sandbox');
  const opts = plan.args.slice(o.at, o.end).filter((a) => a !== '--unshare-pid' && a !== '--unshare-net');
  const m = join.mounts;
  const spec = `${join.pid}:${join.pidns}:${join.netns}${m ? `:${m.fd}:${m.ns}:${m.lines}:${m.digest}` : ''}`;
  return { ...plan, args: ['--session-ns', spec, plan.args[0], ...opts, ...plan.args.slice(o.end)] };
}

/** The bubblewrap options a holder may run, each with how many paths follow it: what src/sandbox/mounts.ts
 * and bwrap-argv.ts emit for a sandbox's mounts and nothing else. Options that write to the host or carry
 * data (`--chmod`, `--file`, `--bind-data`, `--perms`, `--cap-add`, `--seccomp`, `--args`, `--uid`...) are
 * not among them. */
const HOLDER_OPTIONS = new Map<string, number>([
  ['--ro-bind', 2],
  ['--bind', 2],
  ['--symlink', 2],
  ['--tmpfs', 1],
  ['--dev', 1],
  ['--proc', 1],
  ['--remount-ro', 1],
  ['--new-session', 0],
]);

/**
 * Why these mounts cannot be given to a holder, or undefined when they can: `bwrap` (the daemon's own, from
 * a trusted folder) first, then only mount options with absolute paths, and `--cap-drop ALL`. The holder
 * runs them outside every sandbox (shims/gate-session.c): a check of the daemon's own plan, so that no
 * spelling of a plan, however its inputs were chosen, makes a holder run another program or write the host.
 */
export function holderMountsProblem(mounts: readonly string[], bwrap: string): string | undefined {
  if (mounts[0] !== bwrap) return `the program is not ${bwrap}`;
  for (let i = 1; i < mounts.length; i++) {
    const o = mounts[i];
    if (o === '--cap-drop' && mounts[i + 1] === 'ALL') {
      i++;
      continue;
    }
    const n = HOLDER_OPTIONS.get(o);
    if (n === undefined) return `option ${JSON.stringify(o)} is not a mount`;
    for (let k = 1; k <= n; k++) {
      const p = mounts[i + k];
      // a symlink's target is what the link says, not a path the holder opens
      const target = o === '--symlink' && k === 1;
      if (p === undefined || (!target && !p.startsWith('/')) || p.includes('\0')) return `option ${o} needs ${n} absolute path${n > 1 ? 's' : ''}`;
    }
    i += n;
  }
  return undefined;
}

/** Whether the client's environment turns session sandboxes off (GATE_SESSION_SANDBOX=off): each command
 * then gets a sandbox of its own, as before, and its background jobs end with it. */
export function sessionSandboxOff(env: Record<string, string | undefined>): boolean {
  const v = env.GATE_SESSION_SANDBOX;
  return v === 'off' || v === '0' || v === 'false';
}
