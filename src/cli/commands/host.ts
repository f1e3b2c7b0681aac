/**
 * `gate host`: the JSON-RPC 2.0 host API (newline-delimited JSON) on stdio, or with --socket on a Unix
 * socket in the approval folder (never visible inside sandboxes), one session per connection. Protocol:
 * docs/integrations.md; implementation: src/integrations/host-session.ts.
 */
import { chmodSync, renameSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ensureDaemon } from '../../client/index.js';
import { checkSocketPath, gatePaths } from '../../paths/index.js';
import { runHostSession } from '../../integrations/index.js';

/** Options, as src/cli/args/host.ts declares them. */
export interface HostArgs {
  name?: string;
  socket: boolean;
  path?: string;
}

export async function run(values: HostArgs): Promise<number> {
  const paths = gatePaths(process.env);
  await ensureDaemon(process.env);
  const log = (l: string): void => void process.stderr.write(`gate host: ${l}\n`);
  const name = values.name ?? `host-${process.pid}`;
  if (!values.socket) {
    const r = await runHostSession({ paths, input: process.stdin, output: process.stdout, name, log });
    if (r.daemonClosed) {
      process.stderr.write('gate: the gate daemon closed the approval channel\n');
      return 1;
    }
    return 0;
  }
  const path = checkSocketPath(values.path ?? join(paths.approvalDir, 'host.sock'));
  try {
    unlinkSync(path);
  } catch {
    /* none */
  }
  let n = 0;
  const server = createServer((c) => {
    c.on('error', () => c.destroy());
    runHostSession({ paths, input: c, output: c, name: `${name}-${++n}`, log }).then(
      () => c.end(),
      (e: Error) => (log(e.message), c.destroy()),
    );
  });
  // bound and listening under a name of its own, then renamed into place: a client that finds the socket
  // file finds it accepting (between bind() and listen() a connect is refused)
  const temp = checkSocketPath(`${path}.${process.pid}`);
  const old = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(temp, resolve));
  } finally {
    process.umask(old);
  }
  chmodSync(temp, 0o600);
  renameSync(temp, path);
  process.stderr.write(`gate host: listening on ${path}\n`);
  await new Promise<void>((resolve) => {
    for (const s of ['SIGTERM', 'SIGINT'] as const) process.once(s, resolve);
  });
  server.close();
  try {
    unlinkSync(path);
  } catch {
    /* gone */
  }
  return 0;
}
