/**
 * Typical agent scripts (issue 17): the 18 named scripts and 15 of the same kinds, the rules a
 * user who allows their git and test commands has, and a workspace they run in. Shared by
 * test/sandbox/strict.test.ts and test/bench/strict.bench.ts.
 */
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

export const AGENT_SCRIPT_RULES = [
  'prefix_rule(pattern=["git", ["status", "diff", "log", "rev-parse", "show", "commit"]], decision="allow")',
  'prefix_rule(pattern=["npm", "test"], decision="allow")',
];

export const AGENT_SCRIPTS = [
  'git status', 'ls -la | wc -l', 'rg foo src', 'sed -n 1,20p README.md', 'cd src && git status',
  'git status 2>&1', 'git status 2>/dev/null || echo "not a repo"', 'wc -l < README.md', 'ls $HOME', 'ls -la $(echo src)',
  'for f in *.md; do wc -l "$f"; done', 'test -f package.json && echo yes', 'timeout 30 git status', 'nice -n 10 git status',
  'cat <<EOF\nhello from a heredoc\nEOF', `git commit -q --allow-empty -m "$(cat <<'EOF'\nA message\n\nwith a body\nEOF\n)" && git log --oneline -1`,
  'npm test 2>&1 | tail -50', 'cd "$(git rev-parse --show-toplevel)" && git diff --stat',
  'cat README.md', 'head -3 README.md', 'git log --oneline -3 2>&1', 'ls src | head -5', 'grep -n hello README.md',
  'wc -c README.md src/a.md', 'find . -name "*.md" -not -path "./.git/*" | head -5', '[ -d src ] && echo dir',
  'tail -n 2 README.md 2>/dev/null', 'git status --short | wc -l', 'for d in src; do ls "$d"; done | tail -3',
  'echo "files: $(ls | wc -l)"', 'ls nothing-here 2>&1 || true', 'env LC_ALL=C grep -c o README.md', 'stdbuf -oL cat README.md',
];


/** A git workspace for the scripts at `dir` (README.md, src/a.md, package.json with a test script). */
export function agentWorkspace(dir: string, env: Record<string, string>): void {
  mkdirSync(join(dir, 'src'), { recursive: true });
  // the turn sandbox makes a mount point for the protected .codex folder in the workspace: have it always
  mkdirSync(join(dir, '.codex'));
  writeFileSync(join(dir, 'README.md'), 'hello\nworld\nthird line\n');
  writeFileSync(join(dir, 'src', 'a.md'), 'a\n');
  writeFileSync(join(dir, 'package.json'), '{"name":"w","version":"1.0.0","scripts":{"test":"echo tests-pass"}}\n');
  spawnSync('git', ['init', '-q', '-b', 'main', dir], { env });
  // git commit starts `git maintenance run --auto`, a program of its own that no rule allows (asked, as
  // every exec a rule does not cover is under untrusted): this repository keeps it off
  spawnSync('git', ['-C', dir, 'config', 'maintenance.auto', 'false'], { env });
}

export function copyWorkspace(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
}
