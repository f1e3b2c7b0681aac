/**
 * A key of `gate config get|set` as people write it, dotted into a table as config.toml nests it
 * (`sandbox_workspace_write.network_access`, `secrets.hide`), read from the configuration view
 * (configView). Pure; no trust boundary (the view is the daemon's own answer or the local config).
 */
import { SETTABLE_KEYS, TOP_KEYS } from './config.js';

/** The value at a dotted key, or `found: false` when the view does not hold it. */
export function viewValue(view: Record<string, unknown>, key: string): { found: true; value: unknown } | { found: false } {
  let at: unknown = view;
  for (const part of key.split('.')) {
    if (!at || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, part)) return { found: false };
    at = (at as Record<string, unknown>)[part];
  }
  return { found: true, value: at };
}

/** A key config.toml may set (so a view without it means "not set", not "no such key"). */
export function knownKey(key: string): boolean {
  return TOP_KEYS.has(key) || (SETTABLE_KEYS as readonly string[]).includes(key) || key === 'network.allowed_domains' || key === 'network.denied_domains';
}
