/**
 * `gate reload`: the running daemon reloads its rule files now (it also does by itself on every save) and
 * checks config.toml; a broken file is named with its file:line:col, and runs are refused while it stays
 * broken. Client side only: one approval-channel call. Not pure (talks to the daemon).
 */
import { gatePaths } from '../../paths/index.js';
import { approvalCall } from '../../client/index.js';

export async function run(): Promise<number> {
  const r = await approvalCall(gatePaths(process.env), 'reload');
  if (r.error) {
    process.stderr.write(`gate: reload: ${r.error}; runs are refused until it is fixed\n`);
    return 1;
  }
  process.stdout.write(`reloaded ${r.files.length} rule file(s)${r.files.length ? `: ${r.files.join(', ')}` : ''}\n`);
  return 0;
}
