/**
 * The network layer's public surface: the proxy in front of a network-less sandbox and the
 * contract with the daemon's per-connection decision. See types.ts for the trust boundary.
 */
export type { ConnectionClosed, ConnectionRequest, ConnectionDecision, NetworkDecider, NetworkProtocol, ConnectionDecisionSource } from './types.js';
export { NetworkProxies, type NetworkProxiesOptions } from './proxies.js';
export { systemResolver, testResolver, TestResolverError, type Resolver } from './resolve.js';
export { localRange } from './address-ranges.js';
