/**
 * The daemon's session sandboxes (docs/sandbox.md, "Session sandboxes"): one holder process
 * (shims/gate-session) per sandbox key of this session (src/sandbox/session-join.ts), made on first use,
 * whose pid namespace (and, with the network off, network namespace with loopback only) every gated command
 * with that key joins. Background jobs left by a command live on in it; they are listed (`gate jobs`,
 * `gate status`), killed on request (`gate jobs kill`), audited (a job that outlived its command: started,
 * ended, exit status) and end with the sandbox: when the daemon stops, or when the sandbox has had nothing
 * running in it for the idle time. At most MAX_SANDBOXES at once: past that a run gets no session sandbox
 * (it builds its own, as before). Given the sandbox's mounts (bubblewrap and its options, which must give
 * the key: src/sandbox/session-join.ts), the holder builds them once and keeps them for the commands that
 * join; without them, or when they cannot be built, each command builds its own.
 * Not pure: spawns and kills holders, reads /proc. Trust boundary: a `session-sandbox` request comes on the
 * request channel, which sandboxed processes can reach; it names a key and a network choice only, and can
 * only make a holder for a key (bounded in number) and learn its pid and namespace numbers, which give
 * nothing without the privileges to join. The mounts a holder builds (it runs bubblewrap with them outside
 * every sandbox) come only from a plan the daemon made itself (`joinShape`, src/daemon/session-sandbox-plan.ts),
 * with the daemon's own bubblewrap and mount options alone (holderMountsProblem); a key the daemon made no
 * plan for gets a holder without mounts. The holder runs with no_new_privs, the capabilities bubblewrap needs
 * and a seccomp filter of its own (shims/gate-session.c), and its whole argv is audited.
 * Listing and killing are on the approval channel only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import type { AuditLog } from './audit.js';
import { holderMountsProblem, mountsKey, type SessionJoin, type SessionShape } from '../sandbox/index.js';
import { HOLDER_LINES, HOLDER_UNAVAILABLE_ERRNOS, HOLDER_VERBS, type SessionJob, type SessionSandboxStatus } from '../protocol/index.js';

export const MAX_SANDBOXES = 16;
/** Mounts of plans the daemon made, kept by key for a request naming that key (the Node gate-sh's). */
const MAX_MADE = 64;
/** A sandbox with nothing running in it is ended after this long without a command joining it. */
export const IDLE_MS = 10 * 60_000;

export type { SessionJob };

interface Holder {
  key: string;
  ownNetwork: boolean;
  proc: ChildProcess;
  join: SessionJoin;
  createdAt: number;
  lastJoin: number;
  /** host pid → what was recorded when it was adopted */
  adopted: Map<number, { inside: number; argv: string[]; cwd: string; run_id?: string }>;
  ended: boolean;
  /** when the holder was last told to look at its mounts */
  checkedAt: number;
  /** told to look, it has not answered yet: it may be building them again (its bubblewrap is no job; it
   *  says nothing when they had not changed, so this counts for a minute after checkedAt at most) */
  building: boolean;
}

export interface SessionSandboxOptions {
  /** shims/gate-session */
  holder: string;
  /** the daemon's own bubblewrap (src/exec/sandbox-run.ts, findBwrap: a trusted folder); throws when none */
  bwrap(): string;
  audit: AuditLog;
  log(line: string): void;
  idleMs?: number;
}

const CLK_TCK = 100;

function bootTimeMs(): number {
  const m = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'));
  return m ? Number(m[1]) * 1000 : 0;
}

/** The inode of a process's namespace, as its /proc link names it (`pid:[4026531836]`: namespaces(7), the same
 * number stat(2) gives, without building a Stats object: jobs() reads it for every process on the host).
 * Throws when unreadable (gone), as stat did. */
function nsInode(pid: number, kind: string): number {
  const link = readlinkSync(`/proc/${pid}/ns/${kind}`);
  const m = /:\[(\d+)\]$/.exec(link);
  if (!m) throw new Error(`unexpected namespace link ${link}`);
  return Number(m[1]);
}

function readArgv(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return [];
  }
}

function readCwd(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return '?';
  }
}

function readRun(pid: number): string | undefined {
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    return env.find((e) => e.startsWith('GATE_RUN='))?.slice(9);
  } catch {
    return undefined;
  }
}

/** The held mounts of a holder's `ready` or `mounts` line ("3 <lines> <digest>"): their namespace number
 * read from the holder's descriptor. */
const HELD = '(\\d+) (\\d+) ([0-9a-f]{1,16})';
function heldMounts(pid: number, fd: string, lines: string, digest: string): NonNullable<SessionJoin['mounts']> {
  return { fd: Number(fd), ns: statSync(`/proc/${pid}/fd/${fd}`).ino, lines: Number(lines), digest };
}

/** The status a shell reports for a wait status: the exit code, or 128 + the signal. */
export function shellStatus(wait: number): number {
  const sig = wait & 0x7f;
  return sig === 0 ? (wait >> 8) & 0xff : 128 + sig;
}

export class SessionSandboxes {
  private readonly holders = new Map<string, Holder>();
  private readonly starting = new Map<string, Promise<SessionJoin | null>>();
  private readonly boot = bootTimeMs();
  private readonly idle: NodeJS.Timeout;
  private stopped = false;
  /** why no holder can be made here (a non-root user without a user namespace of the holder's: EPERM);
   * set once, so that every later run does not start a holder only to see it fail */
  private unavailable?: string;
  /** key → the mounts of a plan the daemon made itself (checked), the most recent last */
  private readonly made = new Map<string, string[]>();

  constructor(private readonly o: SessionSandboxOptions) {
    this.idle = setInterval(() => this.endIdle(), Math.min(o.idleMs ?? IDLE_MS, 60_000)).unref();
  }

  /**
   * The namespaces of the sandbox of a plan the daemon made itself (its shape: src/sandbox/session-join.ts):
   * its mounts are remembered for its key (a later request naming the key gets them held) when they are
   * the daemon's bubblewrap and mount options alone.
   */
  async joinShape(shape: SessionShape): Promise<SessionJoin | null> {
    let mounts: string[] | undefined;
    if (shape.mounts.length > 1 && mountsKey(shape.mounts, shape.ownNetwork) === shape.key) {
      let why: string | undefined;
      try {
        why = holderMountsProblem(shape.mounts, this.o.bwrap());
      } catch (e) {
        why = (e as Error).message;
      }
      if (why === undefined) {
        mounts = shape.mounts;
        this.made.delete(shape.key);
        this.made.set(shape.key, mounts);
        if (this.made.size > MAX_MADE) this.made.delete(this.made.keys().next().value!);
      } else this.o.log(`session sandbox ${shape.key.slice(0, 12)}: mounts not held (${why})`);
    }
    return this.start0(shape.key, shape.ownNetwork, mounts);
  }

  /** The namespaces of the sandbox with this key (a request on the request channel names it), made on first
   * use; null when none can be had (the run then makes its own sandbox, as before). Its mounts are held
   * only when the daemon made a plan with this key itself. */
  async join(key: string, ownNetwork: boolean): Promise<SessionJoin | null> {
    return this.start0(key, ownNetwork, this.made.get(key));
  }

  private async start0(key: string, ownNetwork: boolean, mounts: readonly string[] | undefined): Promise<SessionJoin | null> {
    if (!/^[0-9a-f]{64}$/.test(key) || this.stopped || this.unavailable) return null;
    const id = `${key}:${ownNetwork ? 1 : 0}`;
    const h = this.holders.get(id);
    if (h && !h.ended && this.alive(h)) {
      h.lastJoin = Date.now();
      return h.join;
    }
    let p = this.starting.get(id);
    if (!p) {
      const built = mounts && mountsKey(mounts, ownNetwork) === key ? mounts : undefined;
      p = this.start(id, key, ownNetwork, built).finally(() => this.starting.delete(id));
      this.starting.set(id, p);
    }
    return p;
  }

  private alive(h: Holder): boolean {
    try {
      return nsInode(h.join.pid, 'pid') === h.join.pidns;
    } catch {
      return false;
    }
  }

  private async start(id: string, key: string, ownNetwork: boolean, mounts?: readonly string[]): Promise<SessionJoin | null> {
    const old = this.holders.get(id);
    if (old) this.end(old, 'its holder was gone');
    if (this.holders.size >= MAX_SANDBOXES) {
      this.endIdle(5000); // not one a command was just told to join
      if (this.holders.size >= MAX_SANDBOXES) {
        this.o.log(`session sandbox refused: ${MAX_SANDBOXES} exist with jobs running in each; this run gets a sandbox of its own`);
        return null;
      }
    }
    const args = [...(ownNetwork ? ['--net'] : []), ...(mounts ? ['--mounts', ...mounts, '--'] : [])];
    const proc = spawn(this.o.holder, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    proc.stdin!.on('error', () => {});
    const h: Holder = {
      key,
      ownNetwork,
      proc,
      join: { pid: 0, pidns: 0, netns: 0 },
      createdAt: Date.now(),
      lastJoin: Date.now(),
      adopted: new Map(),
      ended: false,
      checkedAt: 0,
      building: false,
    };
    const ready = await new Promise<string | null>((resolve) => {
      let buf = '';
      let first = true;
      proc.stdout!.setEncoding('utf8');
      proc.stdout!.on('data', (d: string) => {
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (first) {
            first = false;
            resolve(line);
          } else this.onLine(h, line);
        }
      });
      proc.once('error', () => resolve(null));
      proc.once('exit', () => resolve(null));
    });
    const m = ready ? new RegExp(`^${HOLDER_LINES.ready} (\\d+)(?: ${HELD})?$`).exec(ready) : null;
    if (!m) {
      // "error <errno> <what>: <text>" (shims/gate-session.c)
      const error = ready ? new RegExp(`^${HOLDER_LINES.error} (\\d+) (.*)$`).exec(ready) : null;
      const why = error ? error[2] : 'its holder did not start';
      // the namespaces themselves refused (not a passing failure): no session sandboxes in this daemon
      if (error && (Object.values(HOLDER_UNAVAILABLE_ERRNOS) as number[]).includes(Number(error[1]))) this.unavailable = why;
      this.o.log(`session sandbox not made: ${why}; ${this.unavailable ? 'every run' : 'the run'} gets a sandbox of its own`);
      proc.kill('SIGKILL');
      return null;
    }
    const pid = Number(m[1]);
    try {
      h.join = { pid, pidns: nsInode(pid, 'pid'), netns: ownNetwork ? nsInode(pid, 'net') : 0 };
      if (m[2] !== undefined) h.join.mounts = heldMounts(pid, m[2], m[3], m[4]);
    } catch (e) {
      this.o.log(`session sandbox not made: ${(e as Error).message}`);
      proc.kill('SIGKILL');
      return null;
    }
    proc.once('exit', () => {
      if (!h.ended) this.end(h, 'its holder ended');
    });
    this.holders.set(id, h);
    const held = h.join.mounts ? 'mounts held' : mounts ? 'mounts not held (each command builds them)' : 'mounts built by each command';
    this.o.log(`session sandbox ${key.slice(0, 12)} made (holder pid ${pid}, network ${ownNetwork ? 'loopback only' : "the host's"}, ${held})`);
    this.o.audit.write({
      kind: 'daemon',
      argv: [this.o.holder, ...args],
      detail: `session sandbox ${key.slice(0, 12)} made: holder pid ${pid}, network ${ownNetwork ? 'loopback only' : 'host'}, ${held}`,
    });
    return h.join;
  }

  /**
   * A command found the held mounts of holder `pid` changed (shims/gate-launch: a folder they bind was
   * removed on the host, and the kernel detached its mount there too); it built its own. The holder looks
   * itself (anyone on the request channel can say this: it costs a look, at most once a second) and, when
   * they did change, builds them again; its jobs stay.
   */
  stale(pid: number, mntns: number): void {
    const now = Date.now();
    for (const h of this.holders.values()) {
      if (h.ended || h.join.pid !== pid || h.join.mounts?.ns !== mntns || now - h.checkedAt < 1000) continue;
      h.checkedAt = now;
      h.building = true;
      h.proc.stdin?.write(`${HOLDER_VERBS.check}\n`);
    }
  }

  private onLine(h: Holder, line: string): void {
    const mounts = new RegExp(`^${HOLDER_LINES.mounts} (?:${HELD}|none)$`).exec(line);
    if (mounts) h.building = false;
    if (mounts) {
      const what = `session sandbox ${h.key.slice(0, 12)}: its mounts changed on the host`;
      try {
        if (mounts[1] === undefined) throw new Error('they could not be built again');
        h.join.mounts = heldMounts(h.join.pid, mounts[1], mounts[2], mounts[3]);
        this.o.log(`${what}; built again`);
        this.o.audit.write({ kind: 'daemon', detail: `${what}; built again` });
      } catch (e) {
        delete h.join.mounts;
        this.o.log(`${what}; ${(e as Error).message}: each command builds its own`);
        this.o.audit.write({ kind: 'daemon', detail: `${what}; each command builds its own` });
      }
      return;
    }
    const job = new RegExp(`^${HOLDER_LINES.job} (\\d+) (\\d+)$`).exec(line);
    if (job) {
      this.adopt(h, Number(job[1]), Number(job[2]));
      return;
    }
    const exit = new RegExp(`^${HOLDER_LINES.exit} (\\d+) (\\d+)$`).exec(line);
    if (exit) {
      const inside = Number(exit[1]);
      for (const [host, rec] of h.adopted)
        if (rec.inside === inside) {
          h.adopted.delete(host);
          this.o.audit.write({
            kind: 'job',
            run_id: rec.run_id,
            cwd: rec.cwd,
            argv: rec.argv,
            exit_status: shellStatus(Number(exit[2])),
            detail: `ended: pid ${inside} in session sandbox ${h.key.slice(0, 12)} (host pid ${host})`,
          });
          break;
        }
    }
  }

  /** A job outlived its command (the holder reported it, or a listing found it the holder's child first):
   * recorded once. */
  private adopt(h: Holder, host: number, inside: number): { inside: number; argv: string[]; cwd: string; run_id?: string } {
    const known = h.adopted.get(host);
    if (known) return known;
    const rec = { inside, argv: readArgv(host), cwd: readCwd(host), run_id: readRun(host) };
    h.adopted.set(host, rec);
    this.o.audit.write({
      kind: 'job',
      run_id: rec.run_id,
      cwd: rec.cwd,
      argv: rec.argv,
      detail: `started: pid ${rec.inside} in session sandbox ${h.key.slice(0, 12)} (host pid ${host}) outlived its command`,
    });
    return rec;
  }

  /** Every process of every session sandbox but the holders themselves. */
  jobs(): SessionJob[] {
    const byNs = new Map<number, Holder>();
    for (const h of this.holders.values()) if (!h.ended) byNs.set(h.join.pidns, h);
    if (byNs.size === 0) return [];
    const own = new Set([this.o.holder]);
    try {
      own.add(this.o.bwrap());
    } catch {
      /* no bubblewrap: no build of mounts either */
    }
    const out: SessionJob[] = [];
    for (const name of readdirSync('/proc')) {
      if (!/^\d+$/.test(name)) continue;
      const pid = Number(name);
      let h: Holder | undefined;
      try {
        h = byNs.get(nsInode(pid, 'pid'));
      } catch {
        continue;
      }
      if (!h || pid === h.join.pid) continue;
      try {
        // the holder's own bubblewrap and keeper while it builds the mounts again: not jobs
        if (h.building && Date.now() - h.checkedAt < 60_000 && own.has(readlinkSync(`/proc/${pid}/exe`))) continue;
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const ns = /^NSpid:\s+(.*)$/m.exec(status)?.[1].trim().split(/\s+/);
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        // PPid as the daemon's /proc shows it: the host's pid of the parent
        const parent = Number(/^PPid:\s+(\d+)$/m.exec(status)?.[1] ?? -1);
        const started = this.boot + (Number(fields[19]) * 1000) / CLK_TCK;
        const inside = Number(ns?.[ns.length - 1] ?? 0);
        // the holder's child already: recorded now, so that a kill before the holder's next look is audited
        const rec = h.adopted.get(pid) ?? (parent === h.join.pid ? this.adopt(h, pid, inside) : undefined);
        out.push({
          pid,
          pid_in_sandbox: inside,
          argv: readArgv(pid),
          cwd: readCwd(pid),
          started_at: new Date(started).toISOString(),
          run_id: rec?.run_id ?? readRun(pid),
          sandbox: h.key.slice(0, 12),
          outlived_command: rec !== undefined,
        });
      } catch {
        /* gone meanwhile */
      }
    }
    return out.sort((a, b) => a.pid - b.pid);
  }

  /** The client folders (GATE_CLIENT_DIR) the processes of every session sandbox were started with: a
   * folder a background job still uses outlives its run (src/daemon/client-folders.ts). */
  clientDirs(): Set<string> {
    const dirs = new Set<string>();
    for (const j of this.jobs()) {
      try {
        const env = readFileSync(`/proc/${j.pid}/environ`, 'utf8').split('\0');
        const d = env.find((e) => e.startsWith('GATE_CLIENT_DIR='))?.slice(16);
        if (d) dirs.add(d);
      } catch {
        /* gone meanwhile */
      }
    }
    return dirs;
  }

  /** Kill one process of a session sandbox (host pid) or all of them; returns how many were signalled. */
  kill(target: number | 'all'): number {
    if (target === 'all') {
      let n = 0;
      for (const h of this.holders.values()) {
        if (h.ended) continue;
        n += this.jobs().filter((j) => j.sandbox === h.key.slice(0, 12)).length;
        h.proc.stdin!.write(`${HOLDER_VERBS.killall}\n`);
      }
      return n;
    }
    if (!this.jobs().some((j) => j.pid === target)) return 0; // only a process of a session sandbox
    try {
      process.kill(target, 'SIGKILL');
      return 1;
    } catch {
      return 0;
    }
  }

  /** For `gate status`. */
  status(): SessionSandboxStatus {
    const jobs = this.jobs();
    return {
      sandboxes: [...this.holders.values()]
        .filter((h) => !h.ended)
        .map((h) => ({
          key: h.key.slice(0, 12),
          holder_pid: h.join.pid,
          network: h.ownNetwork ? ('loopback only' as const) : ('host' as const),
          mounts: h.join.mounts ? ('held' as const) : ('per command' as const),
          created_at: new Date(h.createdAt).toISOString(),
          jobs: jobs.filter((j) => j.sandbox === h.key.slice(0, 12)).length,
        })),
      jobs,
      ...(this.unavailable ? { unavailable: this.unavailable } : {}),
    };
  }

  private end(h: Holder, why: string): void {
    if (h.ended) return;
    h.ended = true;
    for (const [id, x] of this.holders) if (x === h) this.holders.delete(id);
    // pid 1 of the namespace first: the kernel then kills every process left in it
    if (h.join.pid > 0) {
      try {
        if (this.alive(h)) process.kill(h.join.pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    h.proc.kill('SIGKILL');
    this.o.log(`session sandbox ${h.key.slice(0, 12)} ended (${why})`);
    this.o.audit.write({ kind: 'daemon', detail: `session sandbox ${h.key.slice(0, 12)} ended: ${why}` });
  }

  /** End the sandboxes that have nothing running in them and had no command for idleMs. */
  private endIdle(idleMs = this.o.idleMs ?? IDLE_MS): void {
    const now = Date.now();
    const candidates = [...this.holders.values()].filter((h) => !h.ended && now - h.lastJoin >= idleMs);
    if (candidates.length === 0) return;
    const jobs = this.jobs();
    for (const h of candidates) if (!jobs.some((j) => j.sandbox === h.key.slice(0, 12))) this.end(h, `nothing ran in it for ${Math.round(idleMs / 1000)} s`);
  }

  /** The daemon stops: every sandbox and every process in it ends. */
  stopAll(): void {
    this.stopped = true;
    clearInterval(this.idle);
    for (const h of [...this.holders.values()]) this.end(h, 'the daemon stopped');
  }
}
