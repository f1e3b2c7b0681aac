// Preloaded into every unit test file (test/run.mjs --unit, `node --import`): unit tests are pure, so any
// child process, listening socket or bound datagram socket they start is a failure that names itself, rather
// than a unit suite that slowly grows a daemon. Active only inside node:test's per-file processes (the
// runner itself spawns them). Test only; no trust boundary.
import childProcess from 'node:child_process';
import dgram from 'node:dgram';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

if (process.env.NODE_TEST_CONTEXT) {
  const refuse = (what) => () => {
    throw new Error(`a unit test (test/unit/) may not start ${what}: move the test under test/<area>/ (a system test)`);
  };
  for (const k of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    childProcess[k] = refuse(`a child process (child_process.${k})`);
  }
  net.Server.prototype.listen = refuse('a listening socket (net.Server.listen)');
  dgram.Socket.prototype.bind = refuse('a datagram socket (dgram.Socket.bind)');
  // the named ESM exports (import { spawn } from 'node:child_process') follow the replaced properties
  syncBuiltinESMExports();
}
