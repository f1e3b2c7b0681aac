/**
 * `gate reload`: the running daemon reloads its rule files now (it also does by itself on every save) and
 * checks config.toml; a broken file is named with its file:line:col, and runs are refused while it stays
 * broken. Client side only: one approval-channel call. Not pure (talks to the daemon).
 */
import { parseArgs } from 'node:util';
import { gatePaths } from '../../protocol/paths.js';
import { approvalCall } from '../../client/approval-client.js';

const USAGE = 'usage: gate reload\n  reload the rule files now and check config.toml (config.toml changes take effect with gate daemon restart)\n';

export async function run(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' } } }));
  } catch (e) {
    process.stderr.write(`gate: reload: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const r = await approvalCall(gatePaths(process.env), 'reload');
  if (r.error) {
    process.stderr.write(`gate: reload: ${r.error}; runs are refused until it is fixed\n`);
    return 1;
  }
  process.stdout.write(`reloaded ${r.files.length} rule file(s)${r.files.length ? `: ${r.files.join(', ')}` : ''}\n`);
  return 0;
}
