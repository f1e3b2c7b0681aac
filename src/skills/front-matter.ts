/**
 * SKILL.md front matter: YAML between a first line `---` and the next `---` line. Errors name the file
 * and the line:column in SKILL.md (the front matter starts on line 2). Pure apart from loading the yaml
 * package on first use.
 */
import { createRequire } from 'node:module';
import { SkillError } from './skill.js';

type Yaml = typeof import('yaml');
let yaml: Yaml | undefined; // the loaded package, not configuration
/** Loaded on the first SKILL.md: the yaml package costs the daemon's start ~50 ms (docs/startup.md). */
function parseDocument(...a: Parameters<Yaml['parseDocument']>): ReturnType<Yaml['parseDocument']> {
  yaml ??= createRequire(import.meta.url)('yaml') as Yaml;
  return yaml.parseDocument(...a);
}

export function parseFrontMatter(text: string, file: string): Record<string, unknown> {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  if (lines[0]?.trim() !== '---') throw new SkillError(`${file}:1:1: SKILL.md must start with a '---' line (YAML front matter)`);
  const end = lines.findIndex((l, i) => i > 0 && l.trim() === '---');
  if (end < 0) throw new SkillError(`${file}:1:1: SKILL.md front matter is not closed by a '---' line`);
  return parseYamlMap(lines.slice(1, end).join('\n'), file, 1);
}

/** A YAML document that must be a mapping; `lineOffset` = lines before the YAML in the file. */
export function parseYamlMap(src: string, file: string, lineOffset = 0): Record<string, unknown> {
  const doc = parseDocument(src, { uniqueKeys: true, prettyErrors: true });
  const err = doc.errors[0];
  if (err) {
    const pos = err.linePos?.[0];
    const where = pos ? `${pos.line + lineOffset}:${pos.col}` : `${1 + lineOffset}:1`;
    throw new SkillError(`${file}:${where}: malformed YAML: ${err.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  const v: unknown = doc.toJS();
  if (v === null || v === undefined) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw new SkillError(`${file}:${1 + lineOffset}:1: front matter must be a mapping of keys to values`);
  return v as Record<string, unknown>;
}
