/**
 * The text an `eval` runs, when its words say it without running anything: literal words (joined by
 * spaces, as eval joins them), or the one shape agents write to carry a function through quoting,
 * `eval "$(echo '<base64>' | base64 -d)"` (Claude Code's shell snapshot stores every function so).
 * Pure: reads mvdan AST nodes, runs nothing. Anything else is null: the eval stays opaque.
 */
import { BIN_OP, list, nil, nodeType, type MvNode } from './mvdan.js';
import { wordValue } from './word.js';

/** Canonical base64 as GNU `base64 -d` accepts it whole (line breaks allowed, padding only at the end). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** eval's arguments (the words after `eval`) → the script it runs, or null when it is only known at run time. */
export function evalText(words: MvNode[]): string | null {
  // `eval -- text` runs text; any other option is an error in bash, not a script to read
  const first = wordValue(words[0]);
  const args = first.literal && first.value === '--' ? words.slice(1) : words;
  if (args.length === 0) return null;
  const lead = wordValue(args[0]);
  if (!lead.literal) return args.length === 1 ? base64Decoded(args[0]) : null;
  if (lead.value.startsWith('-') && lead.value !== '-') return null;
  const values = args.map((w) => wordValue(w));
  if (values.every((v) => v.literal)) return values.map((v) => (v.literal ? v.value : '')).join(' ');
  return null;
}

/** `"$(echo 'B64' | base64 -d)"` (also `--decode`, unquoted echo word) → the decoded text. */
function base64Decoded(word: MvNode): string | null {
  const parts = list(word.Parts);
  if (parts.length !== 1 || nodeType(parts[0]) !== 'DblQuoted') return null;
  const inner = list(parts[0].Parts);
  if (inner.length !== 1 || nodeType(inner[0]) !== 'CmdSubst') return null;
  const stmts = list(inner[0].Stmts);
  if (stmts.length !== 1) return null;
  const s = stmts[0];
  if (s.Negated || s.Background || s.Coprocess || s.Redirs.$length > 0 || nil(s.Cmd) || nodeType(s.Cmd) !== 'BinaryCmd') return null;
  const pipe = s.Cmd;
  const left = callWords(pipe.X);
  const right = callWords(pipe.Y);
  if (!left || !right || BIN_OP[pipe.Op] !== '|') return null;
  if (left.length !== 2 || left[0] !== 'echo') return null;
  if (right.length !== 2 || right[0] !== 'base64' || (right[1] !== '-d' && right[1] !== '--decode')) return null;
  const b64 = left[1].replace(/\n/g, '');
  if (!BASE64.test(b64)) return null;
  return Buffer.from(b64, 'base64').toString('utf8');
}

/** The literal words of a plain simple command statement, or null. */
function callWords(stmt: MvNode): string[] | null {
  if (nil(stmt) || stmt.Negated || stmt.Background || stmt.Redirs.$length > 0 || nil(stmt.Cmd) || nodeType(stmt.Cmd) !== 'CallExpr') return null;
  const c = stmt.Cmd;
  if (list(c.Assigns).length > 0) return null;
  const out: string[] = [];
  for (const w of list(c.Args)) {
    const v = wordValue(w);
    if (!v.literal) return null;
    out.push(v.value);
  }
  return out;
}
