/**
 * `gate config get [KEY] [--json]` and `gate config set KEY VALUE`: the running daemon's configuration,
 * changed at run time over the approval channel. Without a daemon, `get` shows what one would start with.
 */
import { gatePaths } from '../../paths/index.js';
import { needsDaemon } from '../needs-daemon.js';
import { approvalCall } from '../../client/index.js';
import { configView, knownKey, loadConfig, viewValue } from '../../config/index.js';
import { stringify } from 'smol-toml';

/** `gate config set KEY VALUE` (KEY checked by src/cli/args/config.ts; the daemon checks VALUE). */
export async function set(values: { key: string; value: string; json: boolean }): Promise<number> {
  const { key, value } = values;
  const paths = gatePaths(process.env);
  await needsDaemon(process.env);
  const r = await approvalCall(paths, 'config-set', { key, value });
  print(r.config as Record<string, unknown>, key, values.json);
  // config.toml nests a dotted key in its table: `[sandbox_workspace_write]` then `network_access = ...`
  const dot = key.indexOf('.');
  const where = dot < 0 ? key : `${key.slice(dot + 1)} in [${key.slice(0, dot)}]`;
  process.stderr.write(`gate: config set: in force until the daemon stops; to keep it, set ${where} in ${paths.configFile}\n`);
  return 0;
}

/** `gate config get [KEY]`: the running daemon's configuration, or what a daemon would start with. */
export async function get(values: { key?: string; json: boolean }): Promise<number> {
  const { key } = values;
  const paths = gatePaths(process.env);
  let config: Record<string, unknown>;
  let note = '';
  try {
    config = (await approvalCall(paths, 'config-get')).config as Record<string, unknown>;
  } catch {
    config = configView(loadConfig({ file: paths.configFile, env: process.env }));
    note = `# no daemon running for session '${paths.session}': this is what 'gate daemon start' would use\n`;
  }
  if (key && !viewValue(config, key).found) {
    if (knownKey(key)) {
      // a key of config.toml that this configuration leaves out: its default (or its table is not in force)
      process.stderr.write(`gate: config get: '${key}' is not set (sandbox_mode ${String(config.sandbox_mode)}); the default is in force\n`);
      return 1;
    }
    process.stderr.write(`gate: unknown config key '${key}' (known: ${Object.keys(config).join(', ')})\n`);
    return 2;
  }
  if (note && !values.json) process.stdout.write(note);
  print(config, key, values.json);
  return 0;
}

/** The whole configuration in one format: TOML as config.toml spells it, or JSON with --json. One key: its
 * value alone, for scripts (a string bare, anything else as JSON). */
function print(config: Record<string, unknown>, key: string | undefined, json: boolean | undefined): void {
  if (key) {
    const r = viewValue(config, key);
    // the only keys a set can take out of the view are secrets.hide/show set empty (`''`): an empty list
    if (!r.found) {
      process.stdout.write('[]\n');
      return;
    }
    const v = r.value;
    process.stdout.write((json || typeof v !== 'string' ? JSON.stringify(v) : v) + '\n');
    return;
  }
  if (json) process.stdout.write(JSON.stringify(config, null, 2) + '\n');
  else process.stdout.write(stringify(config).replace(/\n*$/, '\n'));
}
