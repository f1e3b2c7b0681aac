/**
 * The request-channel client's errors: what kind of failure (not running, unreachable from this sandbox,
 * not answering, overloaded, protocol, version) and a message that says what happened and what to do.
 * Pure but for reading /proc/self/status (is this process under seccomp?) for a supporting detail.
 */
import { readFileSync } from 'node:fs';
import { CALL_TEXTS, decode, type Envelope, fill, type ProtocolError } from '../protocol/index.js';

/** `unreachable`: a daemon may run, but a sandbox around this process hides or forbids its sockets. */
export type RequestErrorKind = 'not-running' | 'unreachable' | 'not-answering' | 'overloaded' | 'protocol' | 'version';

/** Why a request failed; `message` says what happened and what to do. */
export class RequestError extends Error {
  constructor(
    readonly kind: RequestErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export const ERRNO: Record<number, string> = { [-1]: 'EPERM', [-2]: 'ENOENT', [-111]: 'ECONNREFUSED', [-11]: 'EAGAIN', [-13]: 'EACCES', [-30]: 'EROFS' };

/** Errors a sandbox gives for a socket it forbids (seccomp: EPERM; Landlock, modes: EACCES; read-only: EROFS). */
export const DENIED_ERRNOS = new Set([-1, -13, -30]);

/** What to do about it, said the same for every route that ends here (gate-sh, gate mcp, gate approve, hooks). */
export function unreachableMessage(why: string): string {
  return (
    `cannot reach the gate daemon from here: ${why}${seccompNote()}. ` +
    `This process seems to run inside another sandbox (the agent's own, a container, bubblewrap) that hides or forbids the daemon's socket. ` +
    `Turn the agent's own sandbox off and let gate-sh sandbox the commands (Codex: sandbox_mode = "danger-full-access"), ` +
    `or route the agent through 'gate mcp' or its hook (see 'gate setup')`
  );
}

/** " (this process runs under a seccomp filter)" when /proc says so: supporting detail, never the reason itself. */
function seccompNote(): string {
  try {
    return /^Seccomp:\s*2$/m.test(readFileSync('/proc/self/status', 'utf8')) ? ' (this process runs under a seccomp filter)' : '';
  } catch {
    return '';
  }
}

export function unreachable(why: string): RequestError {
  return new RequestError('unreachable', unreachableMessage(why));
}

export function notRunning(socket: string, why: string): RequestError {
  return new RequestError('not-running', `the gate daemon is not running (${why} at ${socket}); start it with 'gate daemon start'`);
}

export function died(pending: boolean): RequestError {
  return new RequestError('not-answering', fill(CALL_TEXTS.died, pending ? CALL_TEXTS.diedPending : CALL_TEXTS.diedBefore));
}

export function fromErrorReply(r: { code: string; message: string }): RequestError {
  if (r.code === 'bad-version') return new RequestError('version', fill(CALL_TEXTS.badVersion, r.message));
  if (r.code === 'refused') return new RequestError('protocol', r.message); // its message says why and what to do
  return new RequestError('protocol', fill(CALL_TEXTS.refusedRequest, r.code, r.message));
}

export function decodeReply(buf: Buffer): Envelope | RequestError {
  try {
    return decode(buf);
  } catch (e) {
    const pe = e as ProtocolError;
    return new RequestError(pe.code === 'bad-version' ? 'version' : 'protocol', `protocol error from the gate daemon: ${pe.message}`);
  }
}
