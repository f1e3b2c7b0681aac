/**
 * The configuration's network lists (config.toml):
 *   [network]
 *   allowed_domains = ["registry.npmjs.org", "**.pypi.org"]
 *   denied_domains  = ["*.evil.example"]
 * Codex proxy semantics (src/decide/network-pattern.ts); a bad entry is a ConfigError naming the file, and
 * its line:col when the text is at hand (TOML parsers give no positions for values: it is found again in
 * the text). Pure.
 */
import { NO_NETWORK_LISTS, parseDomainPattern, type DomainPattern, type NetworkLists } from '../decide/index.js';

const KEYS = ['allowed_domains', 'denied_domains'] as const;

/** One bad entry: which list, which entry, and why. */
export class NetworkListError extends Error {
  constructor(
    readonly key: string,
    readonly value: unknown,
    why: string,
  ) {
    super(why);
  }
}

/** `[network]` → the lists; throws NetworkListError (a bad entry) or Error (a bad table). */
export function networkListsFromTable(v: unknown): NetworkLists {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error("'network' must be a table");
  const t = v as Record<string, unknown>;
  for (const k of Object.keys(t)) if (!(KEYS as readonly string[]).includes(k)) throw new Error(`unknown key 'network.${k}' (known: ${KEYS.join(', ')})`);
  const list = (key: (typeof KEYS)[number]): DomainPattern[] => {
    const raw = t[key];
    if (raw === undefined) return [];
    if (!Array.isArray(raw)) throw new Error(`'network.${key}' must be a list of domains`);
    return raw.map((r) => {
      try {
        return parseDomainPattern(r);
      } catch (e) {
        throw new NetworkListError(key, r, `'network.${key}': ${(e as Error).message}`);
      }
    });
  };
  const out = { allowed: list('allowed_domains'), denied: list('denied_domains') };
  return out.allowed.length || out.denied.length ? out : NO_NETWORK_LISTS;
}

/** Where a bad entry is written in the file's text: `line:col` (1-based), or undefined when not found. */
export function locateEntry(text: string, key: string, value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const start = text.search(new RegExp(`(^|[\\s.{,])${key}\\s*=`, 'm'));
  if (start < 0) return undefined;
  const spellings = [JSON.stringify(value), `'${value}'`];
  let at = -1;
  for (const s of spellings) {
    const i = text.indexOf(s, start);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0) return undefined;
  const before = text.slice(0, at).split('\n');
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** The lists as config.toml writes them (`gate config get`), or undefined when both are empty. */
export function networkListsView(l: NetworkLists): Record<string, string[]> | undefined {
  if (!l.allowed.length && !l.denied.length) return undefined;
  return { allowed_domains: l.allowed.map((p) => p.text), denied_domains: l.denied.map((p) => p.text) };
}
