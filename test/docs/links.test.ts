/**
 * The docs point only at what the repository holds. Fails when README.md or a page under docs/ links to a
 * file or an anchor that does not exist; when code or docs name a docs/ page that does not exist, or a
 * section of a page ('exec-gate.md, "Answers reused"') that is no heading or bold lead-in there; and when
 * anything mentions the design documents kept outside the repository, or code and docs cite an issue
 * number (issues are kept outside too: the fact belongs in the comment or on a docs/ page instead). Pure
 * reading of the working tree: no daemon, no sandbox.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { ROOT } from '../helpers/env.js';

/** The folders whose text may refer to docs (build output, dependencies and scratch space left out). */
const SCANNED = ['README.md', 'docs', 'src', 'test', 'shims', 'native', 'scripts', 'bin', '.ci', 'package.json'];
const SKIP = new Set(['node_modules', 'dist', 'scratch', 'build', '.git']);
const TEXT = /\.(md|ts|mts|cts|js|mjs|cjs|c|h|json|sh|py|toml|yml|yaml|gyp|txt)$|^[^.]+$/;

function walk(p: string, out: string[] = []): string[] {
  const abs = join(ROOT, p);
  if (!existsSync(abs)) return out;
  if (statSync(abs).isDirectory()) {
    for (const e of readdirSync(abs)) if (!SKIP.has(e)) walk(join(p, e), out);
  } else if (TEXT.test(p.split('/').pop() ?? '')) out.push(p);
  return out;
}

const files = SCANNED.flatMap((p) => walk(p));
const pages = files.filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));
const read = (f: string) => readFileSync(join(ROOT, f), 'utf8');

/** The text outside fenced code blocks, line by line (a fenced line becomes empty, so line numbers hold). */
function prose(md: string): string[] {
  let fence = '';
  return md.split('\n').map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (!fence) fence = m[1];
      else if (m[1].startsWith(fence[0]) && m[1].length >= fence.length) fence = '';
      return '';
    }
    return fence ? '' : line;
  });
}

/** GitHub's anchor for a heading: its rendered text, lower case, punctuation but `-` and `_` dropped. */
function slug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a page has, duplicates numbered as GitHub numbers them (`x`, `x-1`, `x-2`). */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(read(page))) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Headings and bold lead-ins of a page, as written (a section reference names the start of one). */
function sections(page: string): string[] {
  const out: string[] = [];
  for (const line of prose(read(page))) {
    const h = /^#{1,6}\s+(.*?)\s*$/.exec(line);
    if (h) out.push(h[1]);
    for (const b of line.matchAll(/\*\*([^*]+)\*\*/g)) out.push(b[1]);
  }
  return out;
}

test('README.md and docs/ link only to files and anchors that exist', () => {
  const broken: string[] = [];
  for (const page of pages) {
    prose(read(page)).forEach((line, i) => {
      const text = line.replace(/`[^`]*`/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // a URL: not the repository's to check
        const [path, anchor] = target.split('#', 2);
        const file = path === '' ? page : relative(ROOT, resolve(ROOT, dirname(page), decodeURIComponent(path)));
        const where = `${page}:${i + 1}: ${target}`;
        if (file.startsWith('..') || !existsSync(join(ROOT, file))) broken.push(`${where}: no file ${file}`);
        else if (anchor !== undefined && !(file.endsWith('.md') && anchors(file).has(anchor)))
          broken.push(`${where}: no heading with anchor #${anchor} in ${file}`);
      }
    });
  }
  assert.deepEqual(broken, []);
});

test('every docs/ page that code or docs name exists, and every section they name is one of its headings', () => {
  const broken: string[] = [];
  for (const f of files) {
    const lines = read(f).split('\n');
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/\bdocs\/([\w./-]*\w)\.md\b/g))
        if (!existsSync(join(ROOT, 'docs', `${m[1]}.md`))) broken.push(`${f}:${i + 1}: docs/${m[1]}.md does not exist`);
    });
    // 'page.md, "Section"' (also across a line break), the way comments and pages point into a page
    const flat = lines.join('\n').replace(/\n\s*(?:\*|\/\/|#)?\s*/g, ' ');
    for (const m of flat.matchAll(/\b(?:docs\/)?([\w-]+)\.md,? (?:section )?"([^"]+)"/g)) {
      const page = `docs/${m[1]}.md`;
      if (!existsSync(join(ROOT, page))) continue; // not a docs page (README.md is checked by its links)
      if (!sections(page).some((s) => s.startsWith(m[2]))) broken.push(`${f}: ${page} has no section "${m[2]}"`);
    }
  }
  assert.deepEqual(broken, []);
});

test('nothing mentions the design documents kept outside the repository', () => {
  // spelled in pieces, so this file does not name them itself
  const outside = [
    ['DESIGN', 'md'].join('.'),
    ['codex-behaviour', 'md'].join('.'),
    ['deps', 'md'].join('.'),
    ['peers-2026', 'md'].join('.'),
    ['users-and-bypasses', 'md'].join('.'),
    ['..', 'shared', ''].join('/'),
  ];
  const found: string[] = [];
  for (const f of files) {
    read(f)
      .split('\n')
      .forEach((line, i) => {
        for (const name of outside) if (line.includes(name)) found.push(`${f}:${i + 1}: ${name}`);
      });
  }
  assert.deepEqual(found, []);
});

test('code and docs say the reason, not an issue number (the issues are not in the repository)', () => {
  // what a reader of the code can follow: docs/history keeps its dated records as they were; tests may name
  // the finding they pin
  const cited = /\bissues? #?\d+\b/i;
  const found: string[] = [];
  for (const f of files.filter((f) => /^(src|shims|native|scripts|docs)\/|^README\.md$/.test(f) && !f.startsWith('docs/history/')))
    read(f)
      .split('\n')
      .forEach((line, i) => {
        const m = cited.exec(line);
        if (m) found.push(`${f}:${i + 1}: ${m[0]}`);
      });
  assert.deepEqual(found, []);
});
