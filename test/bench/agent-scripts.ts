/**
 * Issue 19's ten typical agent scripts and the small git workspace they run in, shared by native.bench.ts
 * (gate-sh next to bash / bwrap) and mcp-peer.bench.ts (gate mcp next to codex-shell-tool-mcp). Test only:
 * writes the workspace under the given folder; no trust boundary.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const SCRIPTS = [
  'git status',
  'cat README.md | head -5',
  'for f in *.md; do wc -l "$f"; done',
  'ls -la',
  'grep -rn TODO src | head -3',
  'echo hello && pwd',
  "find . -name '*.ts' | wc -l",
  'sed -n 1,3p README.md',
  'git log --oneline -3',
  'cat package.json | wc -c',
];

/** A small git repository like an agent's workspace, at <dir>/ws. */
export function workspace(dir: string, env: Record<string, string>): string {
  const ws = join(dir, 'ws');
  mkdirSync(join(ws, 'src'), { recursive: true });
  writeFileSync(join(ws, 'README.md'), '# demo\n\nline 3\nline 4\nline 5\nline 6\n');
  writeFileSync(join(ws, 'NOTES.md'), 'a\nb\n');
  writeFileSync(join(ws, 'package.json'), '{"name":"demo","version":"1.0.0"}\n');
  writeFileSync(join(ws, 'src', 'a.ts'), '// TODO: one\nexport const a = 1;\n');
  const git = (...a: string[]) => spawnSync('git', ['-c', 'user.email=b@b', '-c', 'user.name=b', ...a], { cwd: ws, env, stdio: 'ignore' });
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'one');
  return ws;
}

/** The load average's three figures, to print beside every measurement on a shared machine. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}
