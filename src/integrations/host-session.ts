/**
 * One JSON-RPC host session (stdio, or one connection on the host socket): attached to the daemon's approval
 * channel as a `host` approver. Each prompt is sent to the host as an `item/commandExecution/requestApproval`
 * request; its `{decision}` answers the prompt. The host may also set the session's approval and sandbox
 * policy and read the config and status. A host that answers with an error, or an unknown decision, aborts
 * the prompt (fail closed) and is told why.
 */
import type { Readable, Writable } from 'node:stream';
import { ApprovalClient } from '../client/index.js';
import type { ApprovalOp, ApprovalReplies, ApprovalRequests, PromptEvent, ReviewDecision } from '../protocol/index.js';
import { parseApprovalPolicy } from '../decide/index.js';
import type { GatePaths } from '../paths/index.js';
import { ANSWER_REJECTED, APPROVAL_RESOLVED, approvalRequestParams, REQUEST_APPROVAL, resolvedParams, reviewDecisionFromHost } from './host-protocol.js';
import { DAEMON_ERROR, INVALID_PARAMS, JsonRpcPeer, RpcError } from './jsonrpc.js';
import { sandboxPolicyFromState, SandboxStateError } from './sandbox-state.js';
import type { SandboxPolicy } from '../sandbox/index.js';

export interface HostSessionOptions {
  paths: GatePaths;
  input: Readable;
  output: Writable;
  name: string;
  log(line: string): void;
}

/** Resolves when the host's input ends or the daemon closes the approval channel (`daemon: true`). */
export async function runHostSession(opts: HostSessionOptions): Promise<{ daemonClosed: boolean }> {
  const client = await ApprovalClient.connect(opts.paths);
  const shown = new Set<string>();
  const daemon = async <O extends ApprovalOp>(op: O, fields?: ApprovalRequests[O]): Promise<ApprovalReplies[O]> => {
    try {
      return await client.call(op, fields);
    } catch (e) {
      throw new RpcError(DAEMON_ERROR, (e as Error).message);
    }
  };
  const setConfig = async (key: string, value: string): Promise<unknown> => ({ config: (await daemon('config-set', { key, value })).config });
  const object = (p: unknown): Record<string, unknown> => {
    if (!p || typeof p !== 'object' || Array.isArray(p)) throw new RpcError(INVALID_PARAMS, 'params must be an object');
    return p as Record<string, unknown>;
  };

  const peer = new JsonRpcPeer(opts.input, opts.output, {
    initialize: () => ({ serverInfo: { name: 'gate-sh', version: '0.1.0' }, session: opts.paths.session, approver: opts.name }),
    'approvalPolicy/set': (p) => {
      const v = object(p).approvalPolicy;
      try {
        parseApprovalPolicy(v);
      } catch (e) {
        throw new RpcError(INVALID_PARAMS, (e as Error).message);
      }
      return setConfig('approval_policy', typeof v === 'string' ? v : JSON.stringify(v));
    },
    'sandboxPolicy/set': (p) => {
      let policy: SandboxPolicy;
      try {
        policy = sandboxPolicyFromState(object(p));
      } catch (e) {
        if (e instanceof SandboxStateError) throw new RpcError(INVALID_PARAMS, e.message);
        throw e;
      }
      return setConfig('sandbox_mode', JSON.stringify(policy));
    },
    'config/read': async () => ({ config: (await daemon('config-get')).config }),
    'status/read': async () => ({ status: (await daemon('status')).status }),
  });

  const ask = async (p: PromptEvent): Promise<void> => {
    shown.add(p.approval_id);
    let decision: ReviewDecision;
    try {
      const r = reviewDecisionFromHost(await peer.request(REQUEST_APPROVAL, approvalRequestParams(p)).result);
      if ('error' in r) {
        peer.notify(ANSWER_REJECTED, { approvalId: p.approval_id, message: `${r.error}; the prompt is aborted` });
        decision = 'abort';
      } else decision = r.decision;
    } catch (e) {
      if (!shown.has(p.approval_id)) return; // resolved elsewhere meanwhile
      opts.log(`host answered ${p.approval_id} with an error, aborting it: ${(e as Error).message}`);
      decision = 'abort';
    }
    if (!shown.has(p.approval_id)) return;
    const r = await client.call('answer', { approval_id: p.approval_id, decision }).catch((e: Error) => ({ ok: false, error: e.message }));
    if (!r.ok) peer.notify(ANSWER_REJECTED, { approvalId: p.approval_id, message: String(r.error) });
  };

  client.onEvent = (e) => {
    if (e.type === 'prompt') void ask(e);
    else if (e.type === 'resolved' && shown.delete(String(e.approval_id))) peer.notify(APPROVAL_RESOLVED, resolvedParams(e));
  };
  const done = new Promise<{ daemonClosed: boolean }>((resolve) => {
    client.onClose = () => resolve({ daemonClosed: true });
    peer.onClose = () => resolve({ daemonClosed: false });
  });
  await client.call('attach', { name: opts.name, kind: 'host' });
  const r = await done;
  client.close();
  return r;
}
