/**
 * The client/ layer's public surface: other layers import from here, files inside client/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: talking to a running daemon, and what clients share with it: the approval-channel client, autostart,
 * reach, the one-daemon lock, how a prompt looks (prompt-view), the status and audit-log views. Does I/O
 * (sockets, the lock file, starting the daemon); the daemon's replies are checked where they are read.
 */
export { approvalCall, ApprovalClient } from './approval-client.js';
export { type AuditFilter, formatRecord, matches, parseRecords, parseSince } from './audit-query.js';
export { ensureDaemon } from './autostart.js';
export { acquireLock, lockHeld, type LockOwner, pidNamespace, readOwner } from './lock.js';
export { decisionForKey, promptCommand, renderPrompt, VIEW_KEY, wholeCommand } from './prompt-view.js';
export { type Reach, reachDaemon, unreachableMessage } from './reach.js';
export { formatStatus } from './status-view.js';
