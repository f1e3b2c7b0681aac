/**
 * Starting the escalation runner inside the daemon. Without the native addon (not built), escalate.sock is
 * not served: the daemon still decides, and escalated execs fail closed at the shim with a message.
 */
import type { EscalationGrant, EscalationRunner } from './escalation.js';
import type { AuditLog } from './audit.js';
import type { GatePaths } from '../paths/index.js';
import type { SandboxPolicy, SecretsSetting } from '../sandbox/index.js';
import { findBwrap } from '../exec/index.js';
import { EscalationServer } from './escalation-runner.js';

export interface StartEscalationOptions {
  paths: GatePaths;
  env: Record<string, string | undefined>;
  turnPolicy(runId: string): SandboxPolicy;
  secrets?(): SecretsSetting | undefined;
  log(line: string): void;
  audit?: Pick<AuditLog, 'write'>;
  /** the run's root pids while it lives (EscalationServerOptions.runRoots) */
  runRoots?(runId: string): readonly number[] | undefined;
  /** EscalationServerOptions.callerWidens */
  callerWidens?(grant: EscalationGrant, pid: number): boolean;
  /** the run's client folder (EscalationServerOptions.clientDir) */
  clientDir?(runId: string): string | undefined;
  /** the run's network proxy socket under "rules" (EscalationServerOptions.networkRoute) */
  networkRoute?(runId: string): Promise<string | undefined>;
}

export async function startEscalationRunner(o: StartEscalationOptions): Promise<EscalationRunner & { close(): Promise<void> }> {
  try {
    const server = new EscalationServer({
      paths: o.paths,
      env: o.env,
      turnPolicy: o.turnPolicy,
      secrets: o.secrets,
      bwrap: () => findBwrap(o.env),
      log: o.log,
      runRoots: o.runRoots,
      callerWidens: o.callerWidens,
      clientDir: o.clientDir,
      networkRoute: o.networkRoute,
      onFinished: (r) =>
        o.audit?.write({
          kind: 'exec',
          run_id: r.grant.run_id,
          cwd: r.grant.cwd,
          argv: [r.grant.program, ...r.grant.argv.slice(1)],
          execution: r.grant.execution.type,
          exit_status: r.exit_status,
          duration_ms: r.duration_ms,
          detail: `escalated run${r.corrected.length ? `; code-loading variables reset: ${r.corrected.join(', ')}` : ''}`,
        }),
    });
    await server.start();
    return server;
  } catch (e) {
    o.log(`escalations disabled: ${(e as Error).message}`);
    return { grant: (_g: EscalationGrant) => {}, close: async () => {} };
  }
}
