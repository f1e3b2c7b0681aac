/**
 * The daemon side of escalated execs (`escalate.sock`). The shim connects, sends one frame
 * `{token, env}` (u32 LE length + JSON) with its stdin/stdout/stderr attached by SCM_RIGHTS, and waits
 * for `{exit_status}` (or `{error}`). The runner:
 *   - verifies the peer (SO_PEERCRED: same uid) and takes the cwd from /proc/<pid>/cwd — a grant made for
 *     another cwd than the caller's real one is refused;
 *   - binds the grant to its run by the kernel's word: the caller (SO_PEERCRED's pid) must be a process of
 *     the run's tree — a descendant of its outermost gate-sh, or of a command this runner escalated for that
 *     run — and the run must not have ended (runRoots). A token asked for in another run's name (its id is
 *     in the audit log) is refused;
 *   - redeems the one-time grant (program, argv, execution come from the decision, not from the caller); a
 *     grant that leaves the sandbox only because the decision read the model's text in the ancestry of a pid
 *     the request named (byAncestry) only for a caller whose own ancestry reads so (callerWidens);
 *   - corrects the environment to the code-loading variables that were decided (escalation-env.ts);
 *   - spawns the command wrapped per EscalationExecution with the received descriptors as 0/1/2 (a
 *     terminal stays a terminal), in its own process group, still behind the exec gate; a TurnDefault
 *     command under network "rules" gets its run's proxy route, as a run in the turn sandbox does (the
 *     bridge before it: src/sandbox/network-bridge.ts);
 *   - passes on the signals the caller receives (`{signal}` frames), kills the process group when the
 *     caller's connection drops, and replies the exit status (128+n for signal n).
 * Descriptors are received with a small N-API addon (native.ts): Node's net module drops SCM_RIGHTS.
 * Bounded: connections per peer and in all (conn-table.ts: one still in its handshake makes room), 3
 * descriptors per connection at most, a request frame of MAX_FRAME, deframed linearly.
 */
import { chmodSync, closeSync, readlinkSync, unlinkSync, writeSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { Deframer, FORWARDED_SIGNALS, isLossy } from '../protocol/index.js';
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { EscalationGrant, EscalationRunner } from './escalation.js';
import { GrantTable } from './escalation.js';
import type { GatePaths } from '../paths/index.js';
import {
  BRIDGE_PROGRAM,
  bridgeCommand,
  type CommandLine,
  gateGuard,
  gateSandboxContext,
  networkRules,
  proxyEnv,
  sandboxArgvFor,
  type SandboxPolicy,
  type SecretsSetting,
  wrapCommand,
} from '../sandbox/index.js';
import { escalationEnv } from './escalation-env.js';
import { gateNative, type GateNative, LIBGATE, preloadFirst, SHIMS_DIR, withExecGate } from '../exec/index.js';
import { parentPid } from './proc-tree.js';
import { ConnectionTable, type Held } from '../transport/index.js';
import { socketPeer } from './socket-peer.js';
import { dirname, join } from 'node:path';

const MAX_FRAME = 16 * 1024 * 1024;
const HANDSHAKE_TIMEOUT_MS = 5000;

export interface EscalationServerOptions {
  paths: GatePaths;
  /** the daemon's environment (fallback PATH, sandbox context) */
  env: Record<string, string | undefined>;
  /** the turn's sandbox policy now for a run's escalation (TurnDefault): the session's, narrowed by the run's call */
  turnPolicy(runId: string): SandboxPolicy;
  /** the [secrets] setting now (the hidden credential locations; the default list without it) */
  secrets?(): SecretsSetting | undefined;
  /** resolved bubblewrap path (only needed when an execution is sandboxed) */
  bwrap(): string;
  log(line: string): void;
  /** the pids whose descendants are the run's processes (its outermost gate-sh), or undefined when the run
   * has ended or is unknown; none given: no run binding (tests of the runner alone) */
  runRoots?(runId: string): readonly number[] | undefined;
  /** whether the caller `pid` (SO_PEERCRED) is a process whose ancestry carries only the model's text, as the
   * decision read it for a grant `byAncestry` (src/daemon/provenance.ts, callerWidens); none given: such a
   * grant is refused */
  callerWidens?(grant: EscalationGrant, pid: number): boolean;
  /** the run's client folder (src/daemon/client-folders.ts): the only one the escalated command's sandbox
   * sees, where its exec gate binds; none given or unknown: the shared clients' folder outside a sandbox,
   * none inside one */
  clientDir?(runId: string): string | undefined;
  /** network "rules": the run's proxy socket, opened if it is not (src/network/proxies.ts); undefined: the
   * command has no network at all. None given: no TurnDefault command has network under "rules". */
  networkRoute?(runId: string): Promise<string | undefined>;
  /** connections at once, all peers together (default 128) and per peer (default 16) */
  maxConnections?: number;
  maxPerPeer?: number;
  /** audit hook: one call per escalated run */
  onFinished?(r: { grant: EscalationGrant; pid?: number; exit_status: number; duration_ms: number; corrected: string[] }): void;
}

/** The grant's code-loading variables, when the daemon passes them (ExecRequest.env). */
type GrantWithEnv = EscalationGrant & { env?: Record<string, string> };

export class EscalationServer implements EscalationRunner {
  private readonly grants = new GrantTable();
  private server?: Server;
  private readonly native: GateNative;
  private readonly live = new Set<number>();
  private readonly conns = new Set<Socket>();
  /** pid of each escalated command still running → its run: its descendants are that run's too */
  private readonly spawned = new Map<number, string>();
  private readonly table: ConnectionTable<Held>;
  private refusalLoggedAt = 0;

  constructor(private readonly o: EscalationServerOptions) {
    this.native = gateNative();
    this.table = new ConnectionTable({ maxConnections: o.maxConnections ?? 128, maxPerPeer: o.maxPerPeer ?? 16 });
  }

  grant(g: EscalationGrant): void {
    this.grants.grant(g);
  }

  endRun(runId: string): void {
    this.grants.endRun(runId);
  }

  /** Why the caller `pid` is not a process of run `runId` (undefined: it is). The kernel's word: the
   * ancestry /proc shows the daemon, from the pid SO_PEERCRED gave for the connection. */
  private notInRun(runId: string, pid: number): string | undefined {
    if (!this.o.runRoots) return undefined;
    const roots = this.o.runRoots(runId);
    if (!roots) return `the run ${runId} has ended or is unknown`;
    let p: number | undefined = pid;
    for (let i = 0; i < 256 && p !== undefined && p > 1; i++) {
      if (roots.includes(p) || this.spawned.get(p) === runId) return undefined;
      p = parentPid(p);
    }
    return `the caller (pid ${pid}) is not a process of the run ${runId} it names`;
  }

  async start(): Promise<void> {
    const sock = this.o.paths.escalateSock;
    try {
      unlinkSync(sock);
    } catch {
      /* not there */
    }
    const server = createServer({ pauseOnConnect: true }, (s) => this.accept(s));
    await new Promise<void>((res, rej) => {
      server.once('error', rej);
      server.listen(sock, () => {
        server.off('error', rej);
        res();
      });
    });
    // an accept that fails (EMFILE) is the server's 'error' event: logged, the server goes on (with no
    // listener it would end the daemon)
    server.on('error', (e) => {
      if (Date.now() - this.refusalLoggedAt < 10_000) return;
      this.refusalLoggedAt = Date.now();
      this.o.log(`escalate.sock: ${e.message} (logged once per 10 s)`);
    });
    chmodSync(sock, 0o600);
    this.server = server;
  }

  async close(): Promise<void> {
    for (const pgid of this.live) killGroup(pgid);
    for (const s of this.conns) s.destroy();
    await new Promise<void>((res) => (this.server ? this.server.close(() => res()) : res()));
  }

  private accept(s: Socket): void {
    const fd = (s as unknown as { _handle?: { fd?: number } })._handle?.fd;
    const peer = socketPeer(s) ?? '?';
    if (typeof fd !== 'number' || fd < 0 || !this.table.admit(peer)) {
      if (Date.now() - this.refusalLoggedAt > 10_000) {
        this.refusalLoggedAt = Date.now();
        this.o.log(`escalation connection of ${peer} refused: too many open (logged once per 10 s)`);
      }
      s.destroy();
      return;
    }
    // in its handshake, or answered, it may make room for another; while its command runs, never
    let running = false;
    const held: Held = { peer, lastActive: Date.now(), idle: () => !running, close: () => s.destroy() };
    this.table.add(held);
    this.conns.add(s);
    // a caller gone before its answer (EPIPE, ECONNRESET) is its own business: unhandled, such an error
    // ended the daemon (a connection closed before its request was refused with a reply that hit EPIPE)
    s.on('error', () => {});
    s.on('close', () => {
      this.conns.delete(s);
      this.table.remove(held);
    });
    // answered (reply() ends it): a caller that never closes its end does not keep the descriptor
    s.on('finish', () => {
      running = false;
      setTimeout(() => s.destroy(), 1_000).unref();
    });
    const deframer = new Deframer(MAX_FRAME);
    const fds: number[] = [];
    const started = Date.now();
    const fail = (msg: string): void => {
      fds.forEach(closeQuiet);
      if (s.destroyed) return;
      this.o.log(`escalation refused: ${msg}`);
      reply(s, { error: msg });
    };
    let received = false;
    const poll = (): void => {
      if (s.destroyed) return fail('closed to make room');
      try {
        for (;;) {
          const r = this.native.recvFds(fd, 65536);
          if (r === null) break;
          fds.push(...r.fds);
          if (fds.length > 3) return fail(`more than 3 descriptors sent (${fds.length})`);
          if (r.data.length === 0) return fail('the caller closed the connection before its request');
          received = true;
          const whole = deframer.push(r.data);
          if (whole.length) {
            running = true;
            return this.handshake(s, fd, whole[0], fds);
          }
        }
      } catch (e) {
        return fail((e as Error).message);
      }
      if (Date.now() - started > HANDSHAKE_TIMEOUT_MS) return fail('no escalation request within 5 s');
      // a caller sends its request at once: poll fast at first, then back off (many idle connections must
      // not keep the daemon busy polling)
      const waited = Date.now() - started;
      setTimeout(poll, received ? 0 : waited < 50 ? 1 : 25);
    };
    poll();
  }

  private handshake(s: Socket, fd: number, body: Buffer, fds: number[]): void {
    const refuse = (msg: string): void => {
      fds.forEach(closeQuiet);
      this.o.log(`escalation refused: ${msg}`);
      reply(s, { error: msg });
    };
    let req: { token?: unknown; env?: unknown; encoding?: unknown };
    try {
      req = JSON.parse(body.toString('utf8'));
    } catch {
      return refuse('malformed escalation request (not JSON)');
    }
    if (typeof req.token !== 'string' || !Array.isArray(req.env) || req.env.some((e) => typeof e !== 'string'))
      return refuse('malformed escalation request (token and env expected)');
    if (fds.length !== 3) return refuse(`expected 3 descriptors (stdin, stdout, stderr), got ${fds.length}`);
    const cred = this.native.peerCred(fd);
    if (cred.uid !== process.getuid!()) return refuse(`peer uid ${cred.uid} is not the daemon's`);
    const grant = this.grants.redeem(req.token) as GrantWithEnv | undefined;
    if (!grant) return refuse('unknown, used or expired escalation token');
    const stranger = this.notInRun(grant.run_id, cred.pid);
    if (stranger) return refuse(stranger);
    // (the decision read the ancestry of a pid the request named: the caller must be such a process itself)
    if (grant.byAncestry && !this.o.callerWidens?.(grant, cred.pid))
      return refuse(`the caller (pid ${cred.pid}) is not a process of the model's own commands, which alone a rule or an approval of the command takes out of the sandbox`);
    let cwd: string;
    try {
      cwd = readlinkSync(`/proc/${cred.pid}/cwd`);
    } catch {
      return refuse(`cannot read the caller's cwd (pid ${cred.pid})`);
    }
    if (cwd !== grant.cwd) return refuse(`the caller runs in ${cwd}, but the escalation was decided for ${grant.cwd}`);
    if (req.encoding === 'base64') return refuse('an environment that is not valid UTF-8 cannot be escalated');
    if (isLossy([grant.program, grant.cwd, ...grant.argv]))
      return refuse('a command whose bytes are not valid UTF-8 cannot be escalated (it would not run byte for byte)');
    const { env, corrected } = escalationEnv({
      sent: req.env as string[],
      decided: grant.env,
      lib: LIBGATE,
      libFirst: preloadFirst(SHIMS_DIR),
      fallbackPath: this.o.env.PATH ?? '/usr/bin:/bin',
      user: this.o.env,
    });
    if (corrected.length) this.o.log(`escalation ${grant.run_id}: code-loading variables not in the decision reset: ${corrected.join(', ')}`);
    // network "rules" in the turn sandbox: the run's own proxy, as for the run itself (sandbox-step.ts)
    const turn = this.o.turnPolicy(grant.run_id);
    if (grant.execution.type !== 'TurnDefault' || !networkRules(turn) || !this.o.networkRoute)
      return this.launch(s, grant, turn, { env, corrected, cwd, fds }, refuse);
    this.o.networkRoute(grant.run_id).then(
      (socket) => this.launch(s, grant, turn, { env, corrected, cwd, fds, socket }, refuse),
      () => this.launch(s, grant, turn, { env, corrected, cwd, fds }, refuse),
    );
  }

  /** Wrap the granted command as decided (with the run's proxy route when `socket`) and run it. */
  private launch(
    s: Socket,
    grant: GrantWithEnv,
    turn: SandboxPolicy,
    a: { env: Record<string, string>; corrected: string[]; cwd: string; fds: number[]; socket?: string },
    refuse: (msg: string) => void,
  ): void {
    // the caller went while the route was opened: nothing to run for
    if (s.destroyed) return void a.fds.forEach(closeQuiet);
    const { cwd, fds, corrected, socket } = a;
    let line: CommandLine;
    let guard: string | undefined;
    const clientDir = this.o.clientDir?.(grant.run_id);
    try {
      const ctx = gateSandboxContext({ cwd, env: this.o.env, secrets: this.o.secrets?.(), clientDir });
      if (socket) ctx.networkProxyDir = dirname(socket);
      const bwrapArgs = sandboxArgvFor(grant.execution, turn, ctx);
      const command = [grant.program, ...grant.argv.slice(1)];
      // the bridge is this daemon's own shims' (read-only in every sandbox); the command follows its `--`
      const bridged = socket && bwrapArgs ? bridgeCommand(join(SHIMS_DIR, BRIDGE_PROGRAM), socket, command) : command;
      line = wrapCommand(bridged, bwrapArgs, bwrapArgs ? this.o.bwrap() : '');
      // outside any sandbox, still under the gate's guard: the run cannot change its own policy (gate-state.ts)
      if (!bwrapArgs && turn.type !== 'external-sandbox') guard = gateGuard(ctx);
    } catch (e) {
      return refuse(`cannot build the sandbox for ${grant.execution.type}: ${(e as Error).message}`);
    }
    const env = socket && line.sandboxed ? { ...a.env, ...proxyEnv() } : a.env;
    const paths = clientDir ? { ...this.o.paths, clientDir } : this.o.paths;
    const gated = withExecGate({ program: line.program, args: line.args, env, guard }, { paths, runId: grant.run_id, parentPid: process.pid });
    // the command keeps its own argv[0] through the kernel layer's launcher
    const argv0 = line.sandboxed ? undefined : grant.argv[0];
    const launched = argv0 !== undefined && gated.program !== line.program ? { ...gated, args: ['--argv0', argv0, ...gated.args] } : gated;
    this.run(s, grant, launched, argv0, cwd, fds, corrected);
  }

  private run(
    s: Socket,
    grant: EscalationGrant,
    cmd: { program: string; args: string[]; env: Record<string, string> },
    argv0: string | undefined,
    cwd: string,
    fds: number[],
    corrected: string[],
  ): void {
    const started = Date.now();
    const child = spawn(cmd.program, cmd.args, { argv0, cwd, env: cmd.env, stdio: [fds[0], fds[1], fds[2]], detached: true });
    const pgid = child.pid;
    let done = false;
    const finish = (status: number): void => {
      if (done) return;
      done = true;
      if (pgid) {
        this.live.delete(pgid);
        this.spawned.delete(pgid);
      }
      fds.forEach(closeQuiet);
      reply(s, { exit_status: status });
      this.o.onFinished?.({ grant, pid: pgid, exit_status: status, duration_ms: Date.now() - started, corrected });
    };
    child.on('error', (e) => {
      try {
        writeSync(fds[2], `gate-sh: escalated ${grant.argv[0]}: ${e.message}\n`);
      } catch {
        /* stderr gone */
      }
      finish((e as NodeJS.ErrnoException).code === 'ENOENT' ? 127 : 126);
    });
    child.on('exit', (code, signal) => finish(code ?? 128 + (signal ? (constants.signals[signal] ?? 0) : 0)));
    if (pgid) {
      this.live.add(pgid);
      this.spawned.set(pgid, grant.run_id);
    }
    // The caller's connection is its life: when it goes, the escalated command goes too. While it
    // lives, the signals it receives (Ctrl-C, kill, SIGWINCH) reach the command's process group.
    const deframer = new Deframer();
    s.on('data', (chunk: Buffer) => {
      try {
        for (const f of deframer.push(chunk)) {
          const sig = (JSON.parse(f.toString('utf8')) as { signal?: unknown }).signal;
          if (!done && pgid && typeof sig === 'number' && FORWARDED.has(sig)) signalGroup(pgid, sig);
        }
      } catch {
        s.destroy(); // a malformed frame: treat as the caller gone
      }
    });
    s.on('error', () => {});
    s.on('close', () => {
      if (!done && pgid) killGroup(pgid);
    });
    s.resume();
  }
}

function reply(s: Socket, msg: Record<string, unknown>): void {
  if (s.destroyed) return;
  const body = Buffer.from(JSON.stringify(msg), 'utf8');
  const head = Buffer.allocUnsafe(4);
  head.writeUInt32LE(body.length, 0);
  s.end(Buffer.concat([head, body]));
  s.resume(); // read the caller's end of the connection so the socket closes (it may still be paused)
}

function closeQuiet(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    /* already closed */
  }
}

/** Signals the caller may pass on: the ones its client forwards (src/protocol/shared-with-c.ts). */
const FORWARDED = new Set<number>(FORWARDED_SIGNALS.map((s) => constants.signals[s]));

function signalGroup(pgid: number, sig: number): void {
  try {
    process.kill(-pgid, sig);
  } catch {
    /* gone */
  }
}

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* gone */
  }
}
