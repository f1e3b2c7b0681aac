/**
 * The transport/ layer's public surface: other layers import from here, files inside transport/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: the request channel's two ends: the request client (datagrams, stream fallback, its errors,
 * ping) and the daemon's server (bounded connections, per-run request rates). Socket I/O; what arrives is
 * checked by protocol/'s validators.
 */
export { type Outgoing, RequestClient, RequestError, unreachableMessage } from './client.js';
export { ConnectionTable, type Held } from './conn-table.js';
export { type DgramSocket, unixDgram } from './dgram.js';
export { pingDaemon, probeDaemon } from './ping.js';
export { DEFAULT_RATE_LIMITS, type RateLimits } from './run-rate.js';
export { DEFAULT_STREAM_LIMITS, EncodedReply, errorReply, type HandlerContext, NO_REPLY, RequestServer } from './server.js';
