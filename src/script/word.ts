/**
 * One mvdan Word → the single string bash will pass after quote removal, or why it is not literal.
 * A word is literal only when bash cannot change it: no parameter/command/arithmetic/process
 * expansion, no unquoted glob, brace expansion or tilde. Quote removal follows bash exactly
 * (`\x` → x outside quotes; inside "" only \$ \` \" \\ and \newline are escapes; '' is verbatim;
 * $'' is ANSI-C).
 */
import { decodeAnsiC } from './ansi-c.js';
import { at, list, nodeType, str, type MvNode } from './mvdan.js';

export type WordValue = { literal: true; value: string } | { literal: false; reason: string };

// Stand-in for a quoted or escaped character in the "unquoted view" used to spot globs and braces.
const QUOTED = '\u0000';

export function wordValue(word: MvNode): WordValue {
  let value = '';
  let view = ''; // the word with every quoted/escaped char replaced by QUOTED
  for (const part of list(word.Parts)) {
    const t = nodeType(part);
    if (t === 'Lit') {
      const r = unquoteLit(str(part.Value));
      value += r.value;
      view += r.view;
    } else if (t === 'SglQuoted') {
      const raw = str(part.Value);
      const v = part.Dollar ? decodeAnsiC(raw) : raw;
      if (v === null) return { literal: false, reason: `ANSI-C string with NUL or raw byte at ${at(part)}` };
      value += v;
      view += QUOTED.repeat(v.length);
    } else if (t === 'DblQuoted') {
      if (part.Dollar) return { literal: false, reason: `locale string $"..." at ${at(part)}` };
      for (const inner of list(part.Parts)) {
        if (nodeType(inner) !== 'Lit') return { literal: false, reason: `${describe(inner)} at ${at(inner)}` };
        const v = unquoteDouble(str(inner.Value));
        value += v;
        view += QUOTED.repeat(v.length);
      }
    } else return { literal: false, reason: `${describe(part)} at ${at(part)}` };
  }
  const bad = expansionIn(view);
  if (bad) return { literal: false, reason: `${bad} at ${at(word)}` };
  return { literal: true, value };
}

function describe(part: MvNode): string {
  switch (nodeType(part)) {
    case 'ParamExp': return 'parameter expansion';
    case 'CmdSubst': return 'command substitution';
    case 'ArithmExp': return 'arithmetic expansion';
    case 'ProcSubst': return 'process substitution';
    case 'ExtGlob': return 'extended glob';
    default: return nodeType(part);
  }
}

/** Unquoted literal text: backslash escapes the next char; backslash-newline disappears. */
function unquoteLit(raw: string): { value: string; view: string } {
  if (!raw.includes('\\')) return { value: raw, view: raw };
  let value = '';
  let view = '';
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '\\' && i + 1 < raw.length) {
      i++;
      if (raw[i] === '\n') continue;
      value += raw[i];
      view += QUOTED;
    } else {
      value += raw[i];
      view += raw[i];
    }
  }
  return { value, view };
}

/** Literal text inside "...": only \$ \` \" \\ and \newline are escapes. */
export function unquoteDouble(raw: string): string {
  if (!raw.includes('\\')) return raw;
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const n = raw[i + 1];
    if (raw[i] === '\\' && n !== undefined && '$`"\\\n'.includes(n)) {
      i++;
      if (n !== '\n') out += n;
    } else out += raw[i];
  }
  return out;
}

/** Which expansion bash would still apply to the unquoted characters of a word, if any. */
export function expansionIn(view: string): string | null {
  if (!/[*?[{~]/.test(view)) return null;
  if (/[*?]/.test(view) || /\[[^\]]*\]/.test(view)) return 'glob';
  if (/\{[^{}]*(,|\.\.)[^{}]*\}/.test(view)) return 'brace expansion';
  // Tilde: at the start, or after = or : (bash expands those in assignment-like words).
  if (/(^|[=:])~/.test(view)) return 'tilde expansion';
  return null;
}
