// `npm run test:agents`: the end-to-end tests with real agent CLIs (dist/test/agents/*.e2e.js), apart from
// `npm test` because they install pinned agents from npm on first use (cached in scratch/agents/) and take
// minutes. Extra args filter by path substring.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

const dir = 'dist/test/agents';
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.e2e.js'))
  .map((f) => join(dir, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no end-to-end test files found under ${dir}`);
  process.exit(1);
}
const child = spawn(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...files], { stdio: 'inherit' });
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
