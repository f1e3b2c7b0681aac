/**
 * Test helper program: runs many `gate` command lines in ONE process through gate's real dispatcher
 * (src/cli/gate.ts main, as bin/gate calls it), each one's stdout, stderr and exit status captured, and prints
 * them as one JSON array on fd 1. For sweeps over every command (help, misuse) where a node process per
 * command line costs most of the test's time; yargs-cli.test.ts checks that a sample gives here exactly what
 * real `gate` processes give. Only for command lines that start nothing and write no file. Not pure (runs gate's
 * code); test only, no trust boundary.
 *
 * Usage: node gate-many.js '[["status","--help"],["help","status"],...]'
 */
import { writeSync } from 'node:fs';
import { main } from '../../src/cli/gate.js';

interface Ran {
  status: number;
  stdout: string;
  stderr: string;
}

const lines = JSON.parse(process.argv[2] ?? '[]') as string[][];
const out: Ran[] = [];
const real = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
for (const argv of lines) {
  const ran: Ran = { status: 0, stdout: '', stderr: '' };
  process.stdout.write = ((chunk: string | Uint8Array) => ((ran.stdout += chunk.toString()), true)) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => ((ran.stderr += chunk.toString()), true)) as typeof process.stderr.write;
  process.exitCode = 0;
  try {
    await main(argv);
  } finally {
    process.stdout.write = real.out;
    process.stderr.write = real.err;
  }
  ran.status = Number(process.exitCode ?? 0);
  out.push(ran);
}
process.exitCode = 0;
writeSync(1, JSON.stringify(out));
