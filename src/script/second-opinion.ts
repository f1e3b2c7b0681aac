/**
 * bash-parser 0.5.0 as an independent second opinion on a script mvdan found plain. It only needs to
 * understand lists, pipelines and simple commands: anything else it reports, or any error, is a
 * disagreement. Its own quote removal is broken (unescape-js), so each word is taken as raw source
 * (its `loc`) and unquoted by `unquoteRaw`, a string-level implementation independent of word.ts.
 */
import { decodeAnsiC } from './ansi-c.js';
import { bashParse, type BpNode } from './bash-parser-call.js';

export interface OpinionCommand {
  /** Leading NAME=VALUE words, raw. */
  assignments: string[];
  /** Words after quote removal. */
  argv: string[];
}
export type Opinion = { ok: true; commands: OpinionCommand[] } | { ok: false; error: string };

/** `parsed` is what bash-parser reads (the source with `$'..'` masked); words come from `src`. */
export function secondOpinion(parsed: string, src: string = parsed): Opinion {
  let ast: BpNode;
  try {
    ast = bashParse(parsed);
  } catch (e) {
    return { ok: false, error: `bash-parser failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}` };
  }
  const commands: OpinionCommand[] = [];
  const error = collect(ast, source(src), commands);
  return error ? { ok: false, error } : { ok: true, commands };
}

function collect(n: BpNode, src: Source, out: OpinionCommand[]): string | null {
  if (n.async) return 'bash-parser sees a background job';
  switch (n.type) {
    case 'Script':
      for (const c of n.commands) { const e = collect(c, src, out); if (e) return e; }
      return null;
    case 'LogicalExpression': return collect(n.left, src, out) ?? collect(n.right, src, out);
    case 'Pipeline':
      for (const c of n.commands) { const e = collect(c, src, out); if (e) return e; }
      return null;
    case 'Command': {
      const assignments: string[] = [];
      const argv: string[] = [];
      for (const p of n.prefix ?? []) {
        if (p.type !== 'AssignmentWord') return `bash-parser sees ${p.type}`;
        assignments.push(raw(p, src));
      }
      for (const w of [n.name, ...(n.suffix ?? [])]) {
        if (!w) continue;
        if (w.type !== 'Word') return `bash-parser sees ${w.type}`;
        const v = unquoteRaw(raw(w, src));
        if (v === null) return `bash-parser word ${JSON.stringify(raw(w, src))} is not literal`;
        argv.push(v);
      }
      out.push({ assignments, argv });
      return null;
    }
    default: return `bash-parser sees ${n.type}`;
  }
}

/** A word's source text. bash-parser's `loc` counts code points, not UTF-16 units. */
function raw(w: BpNode, src: Source): string {
  const at = (cp: number) => (src.units ? src.units[cp] : cp);
  return src.text.slice(at(w.loc.start.char), at(w.loc.end.char + 1));
}

interface Source {
  text: string;
  /** Code point index → UTF-16 index, only when the text has astral characters. */
  units?: number[];
}

function source(text: string): Source {
  if (!/[\ud800-\udfff]/.test(text)) return { text };
  const units: number[] = [];
  for (let i = 0; i < text.length; i += (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1) units.push(i);
  units.push(text.length);
  return { text, units };
}

/** Bash quote removal on the raw text of a word without expansions; null if it has any. */
export function unquoteRaw(s: string): string | null {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      if (i + 1 === s.length) out += c; // a trailing backslash is kept
      else if (s[i + 1] !== '\n') out += s[i + 1];
      i++;
    } else if (c === "'") {
      const j = s.indexOf("'", i + 1);
      if (j < 0) return null;
      out += s.slice(i + 1, j);
      i = j;
    } else if (c === '$' && s[i + 1] === "'") {
      let j = i + 2;
      while (j < s.length && s[j] !== "'") j += s[j] === '\\' ? 2 : 1;
      if (j >= s.length) return null;
      const v = decodeAnsiC(s.slice(i + 2, j));
      if (v === null) return null;
      out += v;
      i = j;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < s.length && s[j] !== '"'; j++) {
        if (s[j] === '$' || s[j] === '`') return null;
        if (s[j] === '\\' && '$`"\\\n'.includes(s[j + 1] ?? '')) {
          if (s[j + 1] !== '\n') out += s[j + 1];
          j++;
        } else out += s[j];
      }
      if (j >= s.length) return null;
      i = j;
    } else if (c === '$' || c === '`') return null;
    else out += c;
  }
  return out;
}
