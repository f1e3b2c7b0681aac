/**
 * `gate config get [KEY] [--json]` and `gate config set KEY VALUE`: the running daemon's configuration,
 * changed at run time over the approval channel. Without a daemon, `get` shows what one would start with.
 */
import { parseArgs } from 'node:util';
import { gatePaths } from '../../protocol/paths.js';
import { needsDaemon } from '../needs-daemon.js';
import { approvalCall } from '../../client/approval-client.js';
import { configView, SETTABLE_KEYS } from '../../config/config.js';
import { loadConfig } from '../../config/load.js';
import { stringify } from 'smol-toml';

const USAGE = `usage: gate config get [KEY] [--json] | gate config set KEY VALUE
  get        the whole configuration as config.toml spells it (TOML), or JSON with --json
  get KEY    that value alone (a string bare, anything else as JSON)
  set        changes the running daemon's configuration until it stops (config.toml keeps it for good)
  settable keys: ${SETTABLE_KEYS.join(', ')}
`;

export async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  const [sub, key, value] = positionals;
  if (values.help || !sub) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  const paths = gatePaths(process.env);
  if (sub === 'set') {
    if (!key || value === undefined) {
      process.stderr.write(`gate-sh: config set needs KEY and VALUE\n${USAGE}`);
      return 2;
    }
    await needsDaemon(process.env);
    const r = await approvalCall(paths, 'config-set', { key, value });
    print(r.config as Record<string, unknown>, key, values.json);
    process.stderr.write(`gate: config set: in force until the daemon stops; to keep it, set ${key} in ${paths.configFile}\n`);
    return 0;
  }
  if (sub === 'get') {
    let config: Record<string, unknown>;
    let note = '';
    try {
      config = (await approvalCall(paths, 'config-get')).config as Record<string, unknown>;
    } catch {
      config = configView(loadConfig({ file: paths.configFile, env: process.env }));
      note = `# no daemon running for session '${paths.session}': this is what 'gate daemon start' would use\n`;
    }
    if (key && !(key in config)) {
      process.stderr.write(`gate-sh: unknown config key '${key}'\n`);
      return 2;
    }
    if (note && !values.json) process.stdout.write(note);
    print(config, key, values.json);
    return 0;
  }
  process.stderr.write(`gate-sh: unknown config command '${sub}'\n${USAGE}`);
  return 2;
}

/** The whole configuration in one format: TOML as config.toml spells it, or JSON with --json. One key: its
 * value alone, for scripts (a string bare, anything else as JSON). */
function print(config: Record<string, unknown>, key: string | undefined, json: boolean | undefined): void {
  if (key) {
    const v = config[key];
    process.stdout.write((json || typeof v !== 'string' ? JSON.stringify(v) : v) + '\n');
    return;
  }
  if (json) process.stdout.write(JSON.stringify(config, null, 2) + '\n');
  else process.stdout.write(stringify(config).replace(/\n*$/, '\n'));
}
