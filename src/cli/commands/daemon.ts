/** `gate daemon run|start|stop|status`: the escalation daemon's lifecycle. */
import { parseArgs } from 'node:util';
import { gatePaths, type GatePaths } from '../../protocol/paths.js';
import { lockHeld, pidNamespace, readOwner } from '../../daemon/lock.js';
import { reachDaemon, unreachableMessage, type Reach } from '../../client/reach.js';
import { pingDaemon } from '../../protocol/ping.js';
import { approvalCall } from '../../client/approval-client.js';
import { run as status } from './status.js';

const USAGE = `usage: gate daemon <run|start|stop|restart|status> [options]
  run      run in the foreground (this terminal answers prompts when it is a TTY)
  start    start in the background (logs to <session dir>/daemon.log); returns once it answers
  stop     stop the session's daemon; refused while runs or background jobs are active, unless --force
           (each run it ends then says so on its stderr)
  restart  stop, then start in the background with this environment (picks up config.toml, GATE_* settings)
  status   same as 'gate status' (--json)
  (rule files are reloaded by themselves; 'gate reload' reloads them now)
options for stop/restart:
  --force                  stop even while runs or background jobs are active
options for run/start/restart:
  --approval-policy P      untrusted | on-failure | on-request | never | JSON {"reject":{...}}
  --sandbox MODE           read-only | workspace-write | danger-full-access | external-sandbox
  --approval-timeout-ms N  how long a prompt waits for an attached approver
  --rules FILE             extra rule file (repeatable)
  --no-terminal            (run) do not use this terminal as an approver
  --test-resolver FILE     (run; tests only) resolve names through FILE, a JSON map of names to loopback
                           addresses, instead of DNS (docs/network.md)
`;

const OPTIONS = {
  'approval-policy': { type: 'string' },
  sandbox: { type: 'string' },
  'approval-timeout-ms': { type: 'string' },
  rules: { type: 'string', multiple: true },
  'no-terminal': { type: 'boolean' },
  'test-resolver': { type: 'string' },
  force: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help' || sub === '-h') {
    process.stdout.write(USAGE);
    return sub ? 0 : 2;
  }
  const { values } = parseArgs({ args: rest, options: OPTIONS });
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
      await runDaemon({
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
      return status(values.json ? ['--json'] : []);
  }
  process.stderr.write(`gate: unknown daemon command '${sub}'\n${USAGE}`);
  return 2;
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
    process.stderr.write(`gate-sh: ${unreachableMessage(reach.why)}; it cannot be stopped from here\n`);
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
  process.stderr.write(`gate-sh: the gate daemon (pid ${owner.pid}) did not stop within 5 s of SIGTERM\n`);
  return 1;
}
