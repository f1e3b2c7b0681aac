// Installs the Codex reference binary (test oracle, never a project dependency) into scratch/codex.
// Pinned: the differential tests compare against @openai/codex@0.169.0 (docs/codex-parity.md).
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';

const dir = 'scratch/codex';
const bin = `${dir}/node_modules/.bin/codex`;
if (!existsSync(bin)) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/package.json`, '{"name":"gate-sh-oracle","private":true}\n');
  console.error('installing @openai/codex@0.169.0 into scratch/codex (test oracle)...');
  const r = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '@openai/codex@0.169.0'], { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(bin)) {
    console.error('gate-sh: could not install the Codex oracle (@openai/codex@0.169.0); the differential tests need it');
    process.exit(1);
  }
}
