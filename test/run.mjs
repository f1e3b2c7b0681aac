// Runs every compiled test file (dist/test/**/*.test.js) with node:test. Extra args filter by path substring.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function walk(dir, out = []) {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.test.js')) out.push(p);
  }
  return out;
}
const filters = process.argv.slice(2);
const files = walk('dist/test').filter((f) => filters.length === 0 || filters.some((x) => f.includes(x))).sort();
if (files.length === 0) {
  console.error('no test files found under dist/test');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(r.status ?? 1);
