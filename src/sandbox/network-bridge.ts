/**
 * Network "rules" (docs/network.md): a run's sandbox has no network of its own (`--unshare-net`: loopback
 * only) and reaches the daemon's proxy for that run through a Unix socket bound into it; a bridge inside
 * (shims/gate-netbridge) listens on 127.0.0.1:BRIDGE_PORT and relays each connection to that socket, and
 * the run's environment names it in the usual proxy variables. Programs that ignore the variables have no
 * route; nothing inside resolves a name (no DNS server is reachable).
 * Pure: names and argv. Trust boundary: the folder is the daemon's, per run, bound read-only (connecting
 * to a socket works on a read-only mount; unlinking or replacing it does not).
 */
import { posix } from 'node:path';
import type { SandboxPolicy } from './policy.js';

/** The port the bridge listens on inside the sandbox's own network namespace (nothing else is there). */
export const BRIDGE_PORT = 3128;
export const BRIDGE_PROGRAM = 'gate-netbridge';

/** Whether a policy's network is "rules" (proxied, decided per host). */
export function networkRules(policy: SandboxPolicy): boolean {
  return policy.type === 'workspace-write' && policy.network_access === 'rules';
}

/** `<session>/net/<run id>/proxy.sock`: one folder per run (its sandbox binds that folder only). */
export function runProxySocket(sessionDir: string, runId: string): string {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(runId)) throw new Error(`not a run id: ${JSON.stringify(runId)}`);
  return posix.join(sessionDir, 'net', runId, 'proxy.sock');
}

/**
 * The proxy variables of a run (every spelling programs read). ALL_PROXY is socks5h: names go to the
 * proxy unresolved. NO_PROXY keeps the sandbox's own loopback direct (a test server the run started
 * itself); a name the proxy would resolve to loopback still goes through the proxy, which refuses it.
 */
export function proxyEnv(port = BRIDGE_PORT): Record<string, string> {
  const http = `http://127.0.0.1:${port}`;
  const socks = `socks5h://127.0.0.1:${port}`;
  const direct = 'localhost,127.0.0.1,::1';
  return {
    HTTP_PROXY: http,
    HTTPS_PROXY: http,
    http_proxy: http,
    https_proxy: http,
    ALL_PROXY: socks,
    all_proxy: socks,
    NO_PROXY: direct,
    no_proxy: direct,
    // Node >= 24 (and 22.21) then reads the variables above for fetch and http itself; older Node ignores it
    NODE_USE_ENV_PROXY: '1',
  };
}

/** The command started by the bridge: `gate-netbridge <port> <socket> -- <command...>`. */
export function bridgeCommand(bridge: string, socket: string, command: readonly string[], port = BRIDGE_PORT): string[] {
  return [bridge, String(port), socket, '--', ...command];
}
