/**
 * Loading the session configuration: defaults ← $GATE_HOME/config.toml ← environment ← daemon flags.
 * A bad file or value throws ConfigError naming the file (with line:col for TOML syntax) and the key.
 */
import { readFileSync } from 'node:fs';
import { parse, TomlError } from 'smol-toml';
import { configFromEnv, configFromTable, ConfigError, DEFAULT_CONFIG, setConfigValue, type GateConfig } from './config.js';
import { locateEntry, networkListsFromTable, NetworkListError } from './network.js';

export interface LoadConfigOptions {
  file: string;
  env: Record<string, string | undefined>;
  /** key → raw string, from daemon flags (highest precedence) */
  flags?: Record<string, string>;
}

/** The table in a config file, or undefined when there is none. */
export function readConfigTable(file: string): Record<string, unknown> | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`${file}: cannot read: ${(e as Error).message}`);
  }
  let table: Record<string, unknown>;
  try {
    table = parse(text) as Record<string, unknown>;
  } catch (e) {
    if (e instanceof TomlError) throw new ConfigError(`${file}:${e.line}:${e.column}: ${e.message.split('\n')[0]}`);
    throw new ConfigError(`${file}: ${(e as Error).message}`);
  }
  locateNetworkProblem(table, text, file);
  return table;
}

/** A bad `[network]` list entry, named with its file:line:col (configFromTable names the file only). */
function locateNetworkProblem(table: Record<string, unknown>, text: string, file: string): void {
  if (table.network === undefined) return;
  try {
    networkListsFromTable(table.network);
  } catch (e) {
    if (!(e instanceof NetworkListError)) return; // configFromTable says it, with the file
    const at = locateEntry(text, e.key, e.value);
    throw new ConfigError(`${file}${at ? `:${at}` : ''}: ${e.message}`);
  }
}

export function loadConfig(opts: LoadConfigOptions): GateConfig {
  const table = readConfigTable(opts.file);
  let c = table ? configFromTable(table, opts.file, DEFAULT_CONFIG) : DEFAULT_CONFIG;
  c = configFromEnv(opts.env, c);
  for (const [k, v] of Object.entries(opts.flags ?? {})) c = setConfigValue(c, k, v, `flag --${k.replace(/_/g, '-')}`);
  return c;
}
