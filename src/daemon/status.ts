/**
 * The daemon's status object (approval channel `status`, `gate status`): its identity, paths, the loaded
 * policy and its reloads, the session's policies and configuration, approvers, pending prompts, counters,
 * session sandboxes. Pure: it reads what the daemon hands it. Only the approval channel shows it (never
 * the request channel, which sandboxes reach).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { GatePaths } from '../paths/index.js';
import { formatApprovalPolicy } from '../decide/index.js';
import { configView, type GateConfig } from '../config/index.js';
import type { ApprovalBroker } from './approvals.js';
import type { PolicyWatcher } from './policy-watch.js';
import type { SessionSandboxes } from './session-sandbox.js';

export interface StatusParts {
  /** what ping's info says (pid, session, protocol, start, decider, warm-up) */
  info: Record<string, unknown>;
  paths: GatePaths;
  auditPath: string;
  policy: PolicyWatcher<unknown>;
  config: GateConfig;
  broker: ApprovalBroker;
  runs: number;
  sessionApprovals: number;
  counters: Record<string, number>;
  sessions?: SessionSandboxes;
  /** what the daemon remembers, table by table: each is bounded */
  tables?: Record<string, number>;
  /** hosts' own sandboxes for their calls: gate-sh's own policy, and each host's (daemon.ts hostSandbox) */
  narrowed?: { own: unknown; by: unknown[] };
}

/** The installation this daemon runs from (dist/src/daemon/ and the bundle's dist/cjs-src/daemon/ are both
 * three folders below it) and its package version: which gate-sh answers, when several are installed. */
function install(): { root: string; version: string } {
  const root = resolve(fileURLToPath(import.meta.url), '../../../..');
  let version = 'unknown';
  try {
    const v = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version;
    if (typeof v === 'string') version = v;
  } catch {
    /* unknown */
  }
  return { root, version };
}

export function statusView(p: StatusParts): Record<string, unknown> {
  const w = p.policy;
  return {
    ...p.info,
    install: install(),
    paths: { request: p.paths.requestSock, approval: p.paths.approvalSock, audit_log: p.auditPath },
    policy: {
      files: w.files,
      loaded_at: w.loadedAt.toISOString(),
      reloads: w.reloads,
      last_reload_error: w.lastError ? { message: w.lastError.message, at: w.lastError.at.toISOString() } : null,
    },
    approval_policy: formatApprovalPolicy(p.config.approval_policy),
    sandbox_policy: p.config.sandbox_policy,
    ...(p.narrowed ? { sandbox_narrowed: p.narrowed } : {}),
    config: configView(p.config),
    approvers: p.broker.approverNames(),
    pending: p.broker.pendingPrompts(),
    runs: p.runs,
    session_approvals: p.sessionApprovals,
    counters: p.counters,
    ...(p.tables ? { tables: p.tables } : {}),
    session_sandboxes: p.sessions?.status(),
  };
}
