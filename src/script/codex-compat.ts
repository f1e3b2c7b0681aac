/**
 * Codex's own raw-word algorithms (docs/codex-parity.md §2.2, §2.3), reproduced on mvdan's AST: no quote
 * removal, no expansion; anything outside the word-only whitelist gives up (null). These exist for
 * parity and for Codex-exact decisions; gate-sh decides on analyze.ts, which is stricter about words.
 */
import { nestedShell } from './shell-detect.js';
import { BIN_OP, REDIR_HEREDOC, REDIR_HERESTRING, list, nil, nodeType, parseBash, str, type MvNode } from './mvdan.js';

/** §2.2: [shell, -c|-lc, script] whose script is only simple commands of literal words joined by && || ; |. */
export function parseShellLcPlainCommands(argv: string[]): string[][] | null {
  try {
    return plainCommands(argv);
  } catch {
    return null; // e.g. RangeError on 40,000 chained `&&`: give up, as on any parse problem
  }
}

/** Larger scripts give up at once (Codex has no cap; parsing megabytes would stall the gate). */
const MAX_BYTES = 256 * 1024;

function plainCommands(argv: string[]): string[][] | null {
  const inv = nestedShell(argv);
  if (!inv || Buffer.byteLength(inv.script) > MAX_BYTES) return null;
  const p = parseBash(inv.script);
  if (!p.ok || p.file.Last.$length > 0) return null;
  const out: string[][] = [];
  for (const s of list(p.file.Stmts)) if (!plainStmt(s, out)) return null;
  return out;
}

function plainStmt(s: MvNode, out: string[][]): boolean {
  if (s.Negated || s.Background || s.Coprocess || s.Redirs.$length > 0 || s.Comments.$length > 0) return false;
  const c = s.Cmd;
  if (nil(c)) return false;
  const t = nodeType(c);
  if (t === 'BinaryCmd') {
    const op = BIN_OP[c.Op];
    return (op === '&&' || op === '||' || op === '|') && plainStmt(c.X, out) && plainStmt(c.Y, out);
  }
  if (t === 'TimeClause' && !c.PosixFormat && !nil(c.Stmt) && c.Stmt.Redirs.$length === 0 && !nil(c.Stmt.Cmd) && nodeType(c.Stmt.Cmd) === 'CallExpr') {
    // tree-sitter reads the `time` keyword as an ordinary command name.
    const words = callWords(c.Stmt.Cmd);
    if (!words) return false;
    out.push(['time', ...words]);
    return true;
  }
  if (t !== 'CallExpr') return false;
  const words = callWords(c);
  if (!words) return false;
  out.push(words);
  return true;
}

function callWords(c: MvNode): string[] | null {
  const args = list(c.Args);
  if (c.Assigns.$length > 0 || args.length === 0) return null;
  const name = list(args[0].Parts);
  if (name.length !== 1 || nodeType(name[0]) !== 'Lit') return null; // quoted name gives up
  // tree-sitter-bash has its own nodes for these (test_command, unset_command): not whitelisted.
  if (TREE_SITTER_SPECIAL.has(str(name[0].Value))) return null;
  const words: string[] = [];
  for (const w of args) {
    const v = rawWord(w);
    if (v === null) return null;
    words.push(v);
  }
  return words;
}

const TREE_SITTER_SPECIAL = new Set(['[', 'unset', 'unsetenv']);

/** word / number / "..." of string_content only / '...' / a concatenation of those; raw text. */
function rawWord(w: MvNode): string | null {
  let out = '';
  const parts = list(w.Parts);
  for (const part of parts) {
    const t = nodeType(part);
    if (t === 'Lit') out += str(part.Value);
    else if (t === 'SglQuoted' && !part.Dollar) out += str(part.Value);
    else if (t === 'DblQuoted' && !part.Dollar && list(part.Parts).every((x: MvNode) => nodeType(x) === 'Lit')) {
      for (const x of list(part.Parts)) out += str(x.Value);
    } else return null;
  }
  if (parts.length > 1 && out === '') return null;
  return out;
}

/** §2.3: exactly one command, fed by a heredoc, no file redirects, all-literal plain words → its words. */
export function parseShellLcSingleCommandPrefix(argv: string[]): string[] | null {
  try {
    return heredocPrefix(argv);
  } catch {
    return null;
  }
}

function heredocPrefix(argv: string[]): string[] | null {
  const inv = nestedShell(argv);
  if (!inv || Buffer.byteLength(inv.script) > MAX_BYTES) return null;
  const p = parseBash(inv.script);
  const stmts = list(p.ok ? p.file.Stmts : null);
  if (stmts.length !== 1) return null;
  const s = stmts[0];
  if (s.Negated || s.Background || s.Coprocess || nil(s.Cmd) || nodeType(s.Cmd) !== 'CallExpr') return null;
  const c = s.Cmd;
  const args = list(c.Args);
  if (c.Assigns.$length > 0 || args.length === 0) return null;
  let heredoc = false;
  for (const r of list(s.Redirs)) {
    if (REDIR_HEREDOC.has(r.Op)) {
      heredoc = true;
      // An unquoted delimiter lets the body hold $(...): that would be a second command.
      if (!nil(r.Hdoc) && !list(r.Hdoc.Parts).every((x: MvNode) => nodeType(x) === 'Lit')) return null;
    } else if (r.Op === REDIR_HERESTRING) {
      if (!list(r.Word.Parts).every((x: MvNode) => ['Lit', 'SglQuoted'].includes(nodeType(x)))) return null;
    } else return null;
  }
  if (!heredoc) return null;
  const words: string[] = [];
  for (const w of args) {
    const parts = list(w.Parts);
    if (parts.length !== 1 || nodeType(parts[0]) !== 'Lit') return null;
    words.push(str(parts[0].Value));
  }
  return words;
}
