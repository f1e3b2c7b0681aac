// `npm run bench`: runs every compiled benchmark (dist/test/bench/*.bench.js) in its own process and prints
// one JSON object: { "<bench name>": <the JSON that benchmark printed on its last stdout line> }.
// Performance is measured here, never asserted by a timed test. Extra args filter by name.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const dir = 'dist/test/bench';
const filters = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
const out = {};
for (const f of files) {
  const name = f.replace(/\.bench\.js$/, '');
  process.stderr.write(`bench: ${name}...\n`);
  const r = spawnSync(process.execPath, [join(dir, f)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  try {
    out[name] = JSON.parse(last);
  } catch {
    out[name] = { error: `exit ${r.status}`, output: last.slice(0, 500) };
  }
}
console.log(JSON.stringify(out, null, 2));
