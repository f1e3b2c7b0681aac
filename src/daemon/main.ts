/**
 * The daemon process: folders, the session lock, config, policy, audit log, the request and approval
 * servers, signals and shutdown. `runDaemon` resolves when the daemon has stopped.
 */
import { chmodSync, mkdirSync, writeFileSync, unlinkSync } from 'node:fs';
import { configFromTable, loadConfig, readConfigTable } from '../config/index.js';
import { ReuseGrants } from './reuse-grants.js';
import { checkSocketPaths, codexHome, type Env, gatePaths, type GatePaths, privateDirProblem } from '../paths/index.js';
import { DEFAULT_RATE_LIMITS, DEFAULT_STREAM_LIMITS, pingDaemon, type RateLimits, RequestServer } from '../transport/index.js';
import { FdReserve, openFileLimit } from './fd-reserve.js';
import { socketPid } from './socket-peer.js';
import { peerFolder } from './peer-folder.js';
import { ApprovalServer } from './approval-server.js';
import { AuditLog } from './audit.js';
import { Daemon } from './daemon.js';
import { startEscalationRunner } from './escalation-start.js';
import { ClientFolders } from './client-folders.js';
import { findBwrap, SHIMS_DIR } from '../exec/index.js';
import { SessionSandboxes } from './session-sandbox.js';
import { openNoticeChannel } from './notice-channel.js';
import { join } from 'node:path';
import { acquireLock, type LockOwner, pidNamespace } from '../client/index.js';
import { startUpKeyPath, writeStartUpKey } from './start-up.js';
import { PolicyWatcher, type PolicyLoader } from './policy-watch.js';
import { policyBinding } from './policy-binding.js';
import { HomePlaces } from './home-places.js';
import type { Approver } from './approver.js';
import { NetworkProxies, systemResolver, testResolver } from '../network/index.js';

export interface RunDaemonOptions {
  env: Env;
  /** config keys from daemon flags */
  flags?: Record<string, string>;
  /** attach this terminal approver (foreground run on a TTY) */
  terminal?: (d: Daemon<unknown>) => Approver & { close(): void };
  log?: (line: string) => void;
  /** called once the daemon answers on its sockets (with the daemon: an in-process host, such as the network
   * proxy's wiring or a test, takes its networkDecider) */
  onReady?: (paths: GatePaths, daemon: Daemon<unknown>) => void;
  /** `gate daemon run --warm-up N` (else GATE_WARM_UP): how many scripts to decide once idle to warm the
   * parsers (warm-up.ts) */
  warmUpScripts?: number;
  /** `gate daemon run --test-resolver FILE`: a loopback-only hosts map instead of DNS (src/network/resolve.ts) */
  testResolver?: string;
}

export class DaemonStartError extends Error {}

/** GATE_WARM_UP: `--warm-up`'s number for a daemon started without it (an autostarted one too). */
function warmUpFromEnv(env: Env): number | undefined {
  const v = env.GATE_WARM_UP;
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new DaemonStartError(`GATE_WARM_UP takes a whole number of scripts, not '${v}'`);
  return Number(v);
}

/** Owner-only folders, created or tightened. */
export function ensureDirs(paths: GatePaths): void {
  for (const d of [paths.runtime, paths.sessionDir, paths.requestDir, paths.clientDir, paths.approvalDir]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    chmodSync(d, 0o700);
  }
  // created by someone else first (a shared /tmp): chmod may pass (root) but the folder is not ours
  const problem = privateDirProblem(paths.runtime);
  if (problem) throw new DaemonStartError(`refusing the runtime folder: ${problem}`);
}

function runCleanups(cleanups: (() => void)[]): void {
  for (const f of cleanups.splice(0).reverse()) {
    try {
      f();
    } catch {
      /* keep cleaning */
    }
  }
}

/** "pid 123" or "pid 123 in PID namespace pid:[...], not this one" */
export function ownerText(owner: LockOwner | undefined): string {
  if (!owner) return 'its pid not written yet';
  const ns = pidNamespace();
  return owner.pidNamespace && ns && owner.pidNamespace !== ns ? `pid ${owner.pid} in another PID namespace, ${owner.pidNamespace}` : `pid ${owner.pid}`;
}

/** A run's request rate: GATE_REQUEST_RATE requests a second (sustained and at once; its queue as long), else
 * DEFAULT_RATE_LIMITS. */
export function requestRate(env: Env): RateLimits {
  const n = Number(env.GATE_REQUEST_RATE);
  return Number.isInteger(n) && n > 0 ? { perSecond: n, burst: n, queued: Math.max(n, 100) } : DEFAULT_RATE_LIMITS;
}

export async function runDaemon(opts: RunDaemonOptions): Promise<void> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`${new Date().toISOString()} ${line}\n`));
  const paths = gatePaths(opts.env);
  const config = loadConfig({ file: paths.configFile, env: opts.env, flags: opts.flags });
  try {
    checkSocketPaths(paths);
  } catch (e) {
    throw new DaemonStartError((e as Error).message);
  }
  ensureDirs(paths);
  const lock = acquireLock(paths.lockFile);
  if (!lock.ok) throw new DaemonStartError(`a gate daemon is already running for session '${paths.session}' (${ownerText(lock.owner)})`);
  const cleanups: (() => void)[] = [() => lock.lock.release()];
  // The lock is ours, yet a daemon that does not take it (an older gate-sh) may still answer there: its
  // sockets are never removed from under it.
  const other = await pingDaemon(paths, 500);
  if (other) {
    runCleanups(cleanups);
    throw new DaemonStartError(
      `a gate daemon is already running for session '${paths.session}' (pid ${String(other.pid)}) without holding ${paths.lockFile}; stop it with 'gate daemon stop'`,
    );
  }
  const cleanup = (): void => runCleanups(cleanups);
  try {
    const audit = new AuditLog(config.audit_log ?? paths.auditLog, paths.session);
    cleanups.push(() => audit.close());
    // the policy epoch: raised here (a new daemon) and on every reload, before a decision under new rules
    const reuse = new ReuseGrants(paths.requestDir);
    cleanups.push(() => reuse.close());
    // descriptors set aside for rule reloads, whatever the connections take (fd-reserve.ts)
    const reserve = new FdReserve();
    cleanups.push(() => reserve.close());
    const binding = policyBinding({ env: opts.env, extraFiles: config.rules, gitReadOnly: () => daemon.config.git_read_only });
    let daemon: Daemon<unknown>;
    // config.toml is watched with the rules: a broken edit refuses runs as a broken rules file does (a
    // valid edit takes effect when the daemon starts again: 'gate daemon restart')
    // the homes as found now: a run without a sandbox may move a folder above one and make another in its
    // place; a load finds them the same, before and after reading, or fails (home-places.ts)
    const places = new HomePlaces([paths.home, codexHome(opts.env)]);
    const loader: PolicyLoader<unknown> = {
      load: () => {
        places.check();
        const p = binding.loader.load();
        const table = readConfigTable(paths.configFile);
        if (table) configFromTable(table, paths.configFile);
        places.check();
        return p;
      },
      watchPaths: () => [...binding.loader.watchPaths(), paths.configFile],
      files: (p) => binding.loader.files(p),
    };
    const watcher = new PolicyWatcher<unknown>(loader, (e) => {
      reuse.bump(); // a failed reload too: no supervisor goes on reusing answers of rules no longer known to be in force
      if (e.ok) log(`policy reloaded from ${e.files.length} file(s)`);
      else log(`policy reload failed: runs are refused until it is fixed: ${e.error}`);
      audit.write({ kind: 'reload', detail: e.ok ? `reloaded ${e.files.join(', ')}` : `failed: ${e.error}` });
    }, reserve);
    // escalate.sock: escalated execs from the exec gate (src/daemon/escalation-runner.ts)
    const escalation = await startEscalationRunner({
      paths,
      env: opts.env,
      turnPolicy: (id) => daemon.sandboxOf(daemon.runs.get(id)),
      secrets: () => daemon.config.secrets,
      log,
      audit,
      runRoots: (id) => daemon.runRoots(id),
      callerWidens: (g, pid) => daemon.callerWidens(g, pid),
      clientDir: (id) => daemon.clientFolderOf(id),
      // (the proxies are made just below; an escalation comes only once the daemon serves requests)
      networkRoute: (id) => (daemon.runs.live(id) ? network.route(id) : Promise.resolve(undefined)),
    });
    cleanups.push(() => void escalation.close());
    // after the audit log is open, ended before it closes: the end of every session sandbox is recorded
    const sessions = new SessionSandboxes({ holder: join(SHIMS_DIR, 'gate-session'), bwrap: () => findBwrap(opts.env), audit, log });
    cleanups.push(() => sessions.stopAll());
    // network "rules": one proxy per run, deciding each new host:port (src/network/)
    if (opts.testResolver) log(`TEST RESOLVER in use: names resolve only through ${opts.testResolver} (loopback addresses only); never in production`);
    const network = new NetworkProxies({
      sessionDir: paths.sessionDir,
      // each new host:port is the daemon's decision (rules, config lists, grants, prompts: network-decider.ts)
      decider: { decide: (r, signal) => daemon.networkDecider.decide(r, signal), closed: (c) => daemon.networkDecider.closed(c) },
      resolve: opts.testResolver ? testResolver(opts.testResolver) : systemResolver,
      log,
    });
    cleanups.push(() => void network.closeAll());
    // a run whose client never said it finished: its proxy goes with it
    const pruneNetwork = setInterval(() => network.prune((id) => daemon.runs.live(id) !== undefined), 5000);
    pruneNetwork.unref();
    cleanups.push(() => clearInterval(pruneNetwork));
    // one client folder per run (src/daemon/client-folders.ts): a run's goes once it ended and no process
    // of a session sandbox (a job it left) still uses it; an earlier daemon's once empty
    const folders = new ClientFolders(paths, log);
    folders.adoptStale();
    // at stop: the folders of runs still going stay for the next daemon (it adopts them)
    cleanups.push(() => folders.prune((id) => daemon.folderInUse(id)));
    const pruneFolders = setInterval(() => {
      if (folders.size === 0) return;
      let used: Set<string> | undefined;
      folders.prune((id, dir) => daemon.folderInUse(id) || (used ??= sessions.clientDirs()).has(dir));
    }, 5000);
    pruneFolders.unref();
    cleanups.push(() => clearInterval(pruneFolders));
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    daemon = new Daemon<unknown>({
      paths,
      config,
      policy: watcher,
      deciderFor: binding.deciderFor,
      knownProgramsState: binding.knownProgramsState,
      amend: async (prefix) => {
        const line = await binding.amend(prefix);
        watcher.reload();
        return line;
      },
      audit,
      escalation,
      log,
      requestStop: () => stop(),
      amendNetwork: async (rule) => {
        const line = await binding.amendNetwork(rule);
        watcher.reload();
        return line;
      },
      sessions,
      reuse,
      network,
      folders,
      startUpKey: writeStartUpKey(paths),
    });
    cleanups.push(() => unlinkSync(startUpKeyPath(paths)));
    const warm = opts.warmUpScripts ?? warmUpFromEnv(opts.env);
    daemon.warmUp(warm === undefined ? {} : { scripts: warm });
    // stream.sock takes at most an eighth of the descriptors: the rest stay for the daemon's own work
    const nofile = openFileLimit() ?? 1024;
    const requests = new RequestServer({
      requestSock: paths.requestSock,
      streamSock: paths.streamSock,
      handle: (m, c) => daemon.handle(m, c),
      log,
      peerOf: socketPid,
      // a retry is recognised only from the client folder its request came from (server.ts, retryKey)
      clientDir: paths.clientDir,
      folderOf: (pid) => peerFolder(paths, pid),
      rateLimits: requestRate(opts.env),
      streamLimits: { maxConnections: Math.max(16, Math.min(DEFAULT_STREAM_LIMITS.maxConnections, Math.floor(nofile / 8))) },
    });
    await requests.start();
    daemon.transportTables = () => requests.tables();
    cleanups.push(() => requests.close());
    // the supervisors' notices of reused execs, out of every sandbox's reach (src/daemon/notice-channel.ts)
    const notices = await openNoticeChannel(paths.noticeSock, (m) => daemon.notice(m), log);
    cleanups.push(() => notices.close());
    const approvals = new ApprovalServer(paths.approvalSock, daemon, log);
    await approvals.start();
    cleanups.push(() => approvals.close());
    lock.lock.markReady(true);
    cleanups.push(() => lock.lock.markReady(false)); // before the sockets go
    writeFileSync(paths.pidFile, `${process.pid}\n`, { mode: 0o600 });
    cleanups.push(() => unlinkSync(paths.pidFile));
    watcher.start();
    cleanups.push(() => watcher.stop());
    cleanups.push(() => daemon.broker.shutdown());
    if (opts.terminal) {
      const t = opts.terminal(daemon);
      const detach = daemon.broker.attach(t);
      cleanups.push(() => (detach(), t.close()));
    }
    const onSignal = (sig: string) => () => {
      log(`received ${sig}, stopping`);
      stop();
    };
    const handlers: [NodeJS.Signals, () => void][] = (['SIGTERM', 'SIGINT', 'SIGHUP'] as NodeJS.Signals[]).map((s) => [s, onSignal(s)]);
    for (const [s, h] of handlers) process.on(s, h);
    cleanups.push(() => handlers.forEach(([s, h]) => process.off(s, h)));
    audit.write({ kind: 'daemon', detail: `started pid ${process.pid}` });
    cleanups.push(() => audit.write({ kind: 'daemon', detail: `stopped pid ${process.pid}` }));
    log(
      `gate daemon ${process.pid} ready: session '${paths.session}', ${watcher.files.length} rule file(s), approval_policy ${JSON.stringify(config.approval_policy)}, sandbox ${config.sandbox_policy.type}`,
    );
    opts.onReady?.(paths, daemon);
    await stopped;
    // Open prompts are answered (denied: the daemon is stopping) and their replies and audit records go
    // out before the sockets close.
    daemon.broker.shutdown();
    await new Promise((r) => setTimeout(r, 100));
  } finally {
    cleanup();
  }
}
