/** `gate daemon run|start|stop|restart|status`: the escalation daemon's lifecycle (options: src/cli/args/daemon.ts). */
import type { DaemonArgs } from '../args/daemon.js';
import { gatePaths, type GatePaths } from '../../paths/index.js';
import { approvalCall, lockHeld, pidNamespace, type Reach, reachDaemon, readOwner, unreachableMessage } from '../../client/index.js';
import { pingDaemon } from '../../transport/index.js';
import { run as status } from './status.js';

export async function run(values: DaemonArgs): Promise<number> {
  const { sub } = values;
  const flags: Record<string, string> = {};
  if (values['approval-policy']) flags.approval_policy = values['approval-policy'];
  if (values.sandbox) flags.sandbox_mode = values.sandbox;
  if (values['approval-timeout-ms']) flags.approval_timeout_ms = values['approval-timeout-ms'];
  if (values.rules) flags.rules = values.rules.join(':');
  const paths = gatePaths(process.env);
  switch (sub) {
    case 'run': {
      const { runDaemon } = await import('../../daemon/main.js');
      const useTerminal = !values['no-terminal'] && process.stdin.isTTY;
      const { terminalApprover } = await import('../../daemon/terminal-approver.js');
      const warm = values['warm-up'];
      if (warm !== undefined && !/^\d+$/.test(warm)) throw new Error(`daemon run: --warm-up takes a whole number of scripts, not '${warm}'`);
      await runDaemon({
        warmUpScripts: warm === undefined ? undefined : Number(warm),
        env: process.env,
        flags,
        terminal: useTerminal ? (d) => terminalApprover(d.broker) : undefined,
        testResolver: values['test-resolver'],
      });
      return 0;
    }
    case 'start': {
      const info = await pingDaemon(paths, 1000);
      if (info) {
        process.stdout.write(`gate daemon already running (pid ${info.pid}, session '${paths.session}')\n`);
        return 0;
      }
      const { startBackgroundDaemon } = await import('../../client/autostart.js');
      const started = await startBackgroundDaemon(process.env, paths, { args: daemonArgs(flags) });
      process.stdout.write(`gate daemon started (pid ${started.pid}, session '${paths.session}')\n`);
      return 0;
    }
    case 'stop':
      return stop(paths, values.force === true);
    case 'restart': {
      const stopped = await stop(paths, values.force === true);
      if (stopped !== 0) return stopped;
      const { startBackgroundDaemon } = await import('../../client/autostart.js');
      const started = await startBackgroundDaemon(process.env, paths, { args: daemonArgs(flags) });
      process.stdout.write(`gate daemon started (pid ${started.pid}, session '${paths.session}')\n`);
      return 0;
    }
    case 'status':
      return status({ json: values.json === true });
  }
}

/** The flags again as `gate daemon run` arguments. */
function daemonArgs(flags: Record<string, string>): string[] {
  return Object.entries(flags).flatMap(([k, v]) =>
    k === 'rules' ? v.split(':').flatMap((f) => ['--rules', f]) : [`--${k === 'sandbox_mode' ? 'sandbox' : k.replace(/_/g, '-')}`, v],
  );
}

/** Stop the session's daemon: refused (exit 1, naming them) while runs or jobs are active, unless force. */
async function stop(paths: GatePaths, force: boolean): Promise<number> {
  const reach = await reachDaemon(paths, process.env, 1000);
  if (reach.state !== 'up') return stopUnanswering(paths, reach);
  const info = reach.info;
  try {
    await approvalCall(paths, 'stop', force ? { force } : {});
  } catch (e) {
    process.stderr.write(`gate: daemon stop: ${(e as Error).message}\n`);
    return 1;
  }
  for (let i = 0; i < 100; i++) {
    if (!(await pingDaemon(paths, 200))) {
      process.stdout.write(`gate daemon stopped (pid ${info.pid})\n`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.stderr.write(`gate: the gate daemon (pid ${info.pid}) did not stop within 5 s\n`);
  return 1;
}

/**
 * A daemon that does not answer on its socket may still run (it holds the session lock): when it wrote
 * down a pid in this PID namespace, SIGTERM it; otherwise say who holds the lock and why it is out of reach.
 */
async function stopUnanswering(paths: GatePaths, reach: Exclude<Reach, { state: 'up' }>): Promise<number> {
  if (reach.state === 'down' || lockHeld(paths.lockFile) !== true) {
    process.stdout.write(`gate daemon is not running (session '${paths.session}')\n`);
    return 0;
  }
  const owner = readOwner(paths.lockFile);
  const ns = pidNamespace();
  if (!owner?.pidNamespace || owner.pidNamespace !== ns) {
    process.stderr.write(`gate: ${unreachableMessage(reach.why)}; it cannot be stopped from here\n`);
    return 1;
  }
  process.kill(owner.pid, 'SIGTERM');
  for (let i = 0; i < 100; i++) {
    if (lockHeld(paths.lockFile) !== true) {
      process.stdout.write(`gate daemon stopped (pid ${owner.pid}; it held the session lock without answering: ${reach.why})\n`);
      return 0;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  process.stderr.write(`gate: the gate daemon (pid ${owner.pid}) did not stop within 5 s of SIGTERM\n`);
  return 1;
}
