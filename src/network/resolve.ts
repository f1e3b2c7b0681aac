/**
 * Name resolution for the proxy: the proxy's own (the sandbox has no DNS: it has no network), so the
 * addresses it connects to are the ones it looked up and checked. Fails closed: no answer in time, an
 * error or no address is a refusal, never a connection somewhere else.
 *
 * The test resolver: a hosts map (JSON `{"name": "127.0.0.2"}` or `{"name": ["127.0.0.2", "::1"]}`) that
 * replaces DNS for the whole daemon, so the tests reach loopback servers by names. An entry
 * `{"name": {"as_public": "127.0.0.2"}}` stands for a public host: its loopback address is not refused as
 * local (so a person's approval, which never names where a host resolves, can be tested end to end).
 * Kept out of production:
 * - only `gate daemon run --test-resolver FILE` turns it on: a command-line flag, read by nothing else; no
 *   environment variable, config key or request can (autostart, `gate daemon start` and every agent set-up
 *   start the daemon with argv of their own making, and a sandboxed run cannot give the daemon arguments);
 * - the file must be owned by the daemon's user and writable by nobody else (read once, at start);
 * - every address in it must be loopback (127.0.0.0/8, ::1): at worst it points a name at this machine,
 *   where a connection still needs a rule naming that host (address-ranges.ts), never at another network;
 * - a name not in the map does not resolve (the test's "DNS failure" case), so nothing leaves the machine;
 * - the daemon says so in its log at start ("TEST RESOLVER in use").
 * Not pure: DNS (getaddrinfo through node:dns) and reading the map's file.
 */
import { lookup } from 'node:dns/promises';
import { readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { localRange } from './address-ranges.js';

/** A name's addresses, or a thrown Error whose message says why not (shown to the run). */
export type Resolver = ((host: string) => Promise<string[]>) & {
  /** the test resolver's stand-ins for public hosts (`as_public` entries): their addresses are not taken as local */
  asPublic?(host: string): boolean;
};

const TIMEOUT_MS = 5000;

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), bounded in time. */
export const systemResolver: Resolver = async (host) => {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${TIMEOUT_MS / 1000} s`)), TIMEOUT_MS);
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }), timeout]);
    const addrs = [...new Set(found.map((a) => a.address))];
    if (addrs.length === 0) throw new Error('no address');
    return addrs;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(code === 'ENOTFOUND' ? 'no such name' : code ? `lookup failed (${code})` : (e as Error).message);
  } finally {
    clearTimeout(timer);
  }
};

export class TestResolverError extends Error {}

/** The test resolver from its file (see the header for what is refused). */
export function testResolver(file: string, uid = process.getuid?.() ?? 0): Resolver {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(file);
  } catch (e) {
    throw new TestResolverError(`--test-resolver ${file}: ${(e as Error).message}`);
  }
  if (st.uid !== uid || (st.mode & 0o022) !== 0)
    throw new TestResolverError(`--test-resolver ${file}: must be owned by uid ${uid} and writable by nobody else`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new TestResolverError(`--test-resolver ${file}: not JSON: ${(e as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new TestResolverError(`--test-resolver ${file}: must be an object of name → address(es)`);
  const map = new Map<string, string[]>();
  const publicNames = new Set<string>();
  for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
    const stand = entry && typeof entry === 'object' && !Array.isArray(entry) ? (entry as Record<string, unknown>) : undefined;
    if (stand && (Object.keys(stand).length !== 1 || !('as_public' in stand)))
      throw new TestResolverError(`--test-resolver ${file}: ${JSON.stringify(name)}: an object entry is {"as_public": address(es)}`);
    const v = stand ? stand.as_public : entry;
    const list = typeof v === 'string' ? [v] : v;
    if (!Array.isArray(list) || list.length === 0 || list.some((a) => typeof a !== 'string' || !isIP(a) || localRange(a) !== 'loopback'))
      throw new TestResolverError(`--test-resolver ${file}: ${JSON.stringify(name)} must map to loopback addresses only (127.0.0.0/8, ::1)`);
    const key = name.toLowerCase().replace(/\.+$/, '');
    map.set(key, list as string[]);
    if (stand) publicNames.add(key);
  }
  const resolver: Resolver = async (host) => {
    const found = map.get(host);
    if (!found) throw new Error('no such name');
    return [...found];
  };
  resolver.asPublic = (host) => publicNames.has(host);
  return resolver;
}
