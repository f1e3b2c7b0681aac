/**
 * Our own traversal of mvdan's AST (syntax.Walk is slow under GopherJS). It does two things at once:
 * - checks whether the top-level list is plain: simple commands with literal words joined by
 *   && || ; | |& and newlines; every construct that is not gets a reason ("subshell at 1:1");
 * - collects every command with a literal name anywhere (substitutions, loops, functions, ...).
 * Unknown node types are a reason too: fail closed.
 */
import { BIN_OP, REDIR_DUP_OUT, REDIR_WRITE, REDIR_HEREDOC, REDIR_HERESTRING, at, list, nil, nodeType, span, str, validPos, type MvNode } from './mvdan.js';
import { wordValue, type WordValue } from './word.js';
import type { Hidden, ListOp, RedirectWrite, ScriptAnalysis, Subcommand, Unwrapped } from './types.js';
import { hiddenOf, RUN_TIME_WORD } from './wrappers.js';
import { sameShellEffect } from './same-shell.js';
import { evalText } from './eval-text.js';

export interface WalkHooks {
  /** Wrappers and nested shells for an argv. */
  unwrap(argv: string[]): Unwrapped;
  /** Literal commands of a script string found in the text (heredoc-fed shells). */
  scriptCommands(script: string): { commands: Subcommand[]; complex: boolean };
  /** A script this same shell runs (`eval` text, a `trap` string, a sourced file's text), analysed. */
  sameShellScript(script: string, sourced: boolean): ScriptAnalysis;
  /** The text of a sourced file (absolute path), or null when it cannot be read now. */
  readSource(path: string): string | null;
}

/** How the walk reads the text: a sourced file's function bodies only define (see `Walker.sourced`). */
export interface WalkMode {
  sourced?: boolean;
}

export interface WalkResult {
  /** Top-level commands when everything is plain (valid only when reasons is empty). */
  commands: Subcommand[];
  ops: ListOp[];
  reasons: string[];
  /** Every literal command found anywhere, in the order bash evaluates them (substitutions first). */
  literal: Subcommand[];
  /** Byte offsets of `#` characters the parser took for a comment inside a word (see hashAfter). */
  hashes: number[];
  /** Byte spans [start, end) of every `$'..'` string (bash-parser cannot parse them; see agreement.ts). */
  ansiC: [number, number][];
  /** A command whose name is only known at run time was found (it has no literal command). */
  dynamicName: boolean;
  /** Every redirection that opens a file for writing, anywhere (see RedirectWrite). */
  writes: RedirectWrite[];
}

const SHELLS = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash']);

export function walkFile(file: MvNode, src: Buffer, hooks: WalkHooks, mode: WalkMode = {}): WalkResult {
  const w = new Walker(src, hooks, mode.sourced === true);
  const stmts = list(file.Stmts);
  for (let i = 0; i < stmts.length; i++) {
    w.stmt(stmts[i], true);
    if (i + 1 < stmts.length) w.ops.push(stmts[i].Background ? '&' : validPos(stmts[i].Semicolon) ? ';' : '\n');
  }
  return {
    commands: w.commands,
    ops: w.ops,
    reasons: w.reasons,
    literal: w.literal,
    hashes: w.hashes,
    ansiC: w.ansiC,
    dynamicName: w.dynamicName,
    writes: w.writes,
  };
}

class Walker {
  commands: Subcommand[] = [];
  ops: ListOp[] = [];
  reasons: string[] = [];
  literal: Subcommand[] = [];
  hashes: number[] = [];
  ansiC: [number, number][] = [];
  dynamicName = false;
  writes: RedirectWrite[] = [];
  /**
   * Reading a file `source` runs: a function body there only defines a command (Claude Code's snapshot
   * carries every function of the user's shell); it is decided when it runs, by the exec gate. `PATH=` in
   * its declarations is the agent's own PATH, not a reason to ask (the exec gate sees where each program is).
   */
  constructor(private src: Buffer, private hooks: WalkHooks, private sourced: boolean) {}

  private complex(why: string, n: MvNode): void {
    if (this.reasons.length < 50) this.reasons.push(`${why} at ${at(n)}`);
  }

  /** A statement; chains of && || | are walked with a stack, not recursion (`a && a && ...` × 40,000). */
  stmt(first: MvNode, top: boolean): void {
    const pending: (MvNode | ListOp)[] = [first];
    while (pending.length > 0) {
      const s = pending.pop();
      if (typeof s === 'string') {
        if (top) this.ops.push(s as ListOp);
        continue;
      }
      if (top) {
        if (s.Negated) this.complex('negation (!)', s);
        if (s.Background) this.complex('background job (&)', s);
        if (s.Coprocess) this.complex('coprocess', s);
        if (s.Redirs.$length > 0) this.complex('redirection', list(s.Redirs)[0]);
      }
      for (const r of list(s.Redirs)) this.redirect(r);
      const c = s.Cmd;
      if (!nil(c) && nodeType(c) === 'BinaryCmd') {
        const op = BIN_OP[c.Op];
        if (!op) this.complex(`operator ${c.Op}`, c);
        pending.push(c.Y);
        if (op) pending.push(op);
        pending.push(c.X); // X first: X's commands and operators, then op, then Y's
        continue;
      }
      this.command(c, top, s);
    }
  }

  private redirect(r: MvNode): void {
    const op = REDIR_WRITE[r.Op];
    if (op && !nil(r.Word)) {
      const v = wordValue(r.Word);
      // `>&2`, `2>&1`, `>&-`: a descriptor duplication or close, not a file
      const dup = r.Op === REDIR_DUP_OUT && v.literal && /^(\d+|-)$/.test(v.value);
      if (!dup) this.writes.push({ op, target: v.literal ? v.value : null, at: at(r) });
    }
    this.word(r.Word);
    this.word(r.Hdoc);
  }

  private command(c: MvNode, top: boolean, s: MvNode): void {
    if (nil(c)) return; // a statement that is only redirections
    const t = nodeType(c);
    switch (t) {
      case 'CallExpr':
        return this.call(c, top, s);
    }
    if (top) this.complex(CONSTRUCT[t] ?? `unsupported construct ${t}`, c);
    switch (t) {
      case 'Block': case 'Subshell': return this.stmts(c.Stmts);
      case 'IfClause':
        for (let k: MvNode = c; !nil(k); k = k.Else) { this.stmts(k.Cond); this.stmts(k.Then); }
        return;
      case 'WhileClause': this.stmts(c.Cond); return this.stmts(c.Do);
      case 'ForClause': {
        const l = c.Loop;
        if (nodeType(l) === 'WordIter') for (const x of list(l.Items)) this.word(x);
        else { this.arith(l.Init); this.arith(l.Cond); this.arith(l.Post); }
        return this.stmts(c.Do);
      }
      case 'CaseClause':
        this.word(c.Word);
        for (const item of list(c.Items)) { for (const p of list(item.Patterns)) this.word(p); this.stmts(item.Stmts); }
        return;
      case 'FuncDecl': if (!this.sourced) this.stmt(c.Body, false); return;
      case 'ArithmCmd': return this.arith(c.X);
      case 'TestClause': return this.test(c.X);
      case 'DeclClause': for (const a of list(c.Args)) this.assign(a); return;
      case 'LetClause': for (const x of list(c.Exprs)) this.arith(x); return;
      case 'TimeClause': case 'CoprocClause': if (!nil(c.Stmt)) this.stmt(c.Stmt, false); return;
      default: if (!top) this.complex(`unsupported construct ${t}`, c);
    }
  }

  private stmts(slice: MvNode): void {
    for (const s of list(slice)) this.stmt(s, false);
  }

  private call(c: MvNode, top: boolean, s: MvNode): void {
    const assigns = list(c.Assigns);
    const args = list(c.Args);
    for (const a of assigns) this.assign(a);
    for (const w of args) this.word(w);
    const assignments: string[] = [];
    let assignsLiteral = true;
    for (const a of assigns) {
      assignments.push(this.raw(a));
      if (!nil(a.Index) || !nil(a.Array) || a.Naked || (!nil(a.Value) && !wordValue(a.Value).literal)) assignsLiteral = false;
    }
    if (args.length === 0) {
      if (top) this.complex('assignment without a command', c);
      return;
    }
    const values: WordValue[] = args.map((w: MvNode) => wordValue(w));
    const name = values[0];
    if (!name.literal) {
      this.complex(`non-literal command name (${name.reason})`, c);
      this.dynamicName = true; // even past the cap on reasons
      return;
    }
    // eval/trap/source of a script known now: its commands are this script's literal commands
    const through = this.seeThrough(name.value, args, values);
    if (through) this.follow(through);
    if (top) {
      if (!assignsLiteral) this.complex('non-literal assignment', c);
      const effect = sameShellEffect(values.map((v) => (v.literal ? v.value : ''))) ?? (through ? `${through.what} runs commands in this shell` : null);
      if (effect) this.complex(effect, c);
      values.forEach((v, i) => {
        if (!v.literal) this.complex(v.reason.replace(/ at .*$/, ''), args[i]);
      });
      if (name.value === '') this.complex('empty command name', c);
    }
    // Codex §2.4: non-literal arguments are skipped; the literal ones are kept in order.
    let argv: string[] = [];
    for (const v of values) if (v.literal) argv.push(v.value); // (a loop: flatMap cost 2% of a 10,000-command walk)
    if (this.sourced && DECLARATIONS.has(argv[0])) argv = argv.filter((a) => !a.startsWith('PATH='));
    // wrappers are unwrapped with each run-time word in its place, so a skipped word never shifts what a
    // wrapper's grammar takes for its own option value or for the program it runs (`timeout "$t" rm x`)
    const sub = through
      ? { argv, assignments, inner: [], redirects: s.Redirs.$length > 0 }
      : this.subcommand(argv, argv.length === values.length ? argv : values.map((v) => (v.literal ? v.value : RUN_TIME_WORD)), assignments, s);
    // `trap "$x" EXIT`: a command string only known at run time (argv skipped it: its first literal word is a signal)
    const action = values[1]?.literal && values[1].value === '--' ? 2 : 1;
    if (name.value === 'trap' && args.length > action + 1 && !values[action].literal)
      (sub.opaque = 'trap sets a command string known only at run time'), (sub.opaqueKind = 'command-string');
    this.literal.push(sub);
    if (top) this.commands.push(sub);
  }

  private subcommand(argv: string[], placed: string[], assignments: string[], s: MvNode): Subcommand {
    const u = this.hooks.unwrap(placed);
    // the inner commands as Codex keeps literal commands: run-time words skipped (where the program itself is
    // one, the words after it are still checked as a command: `env "$V=1" rm x` runs rm)
    const inner = placed === argv ? [...u.inner] : u.inner.map((c) => c.filter((w) => w !== RUN_TIME_WORD)).filter((c) => c.length > 0);
    let hidden = hiddenOf(u);
    if (hidden?.text.includes(RUN_TIME_WORD)) hidden = { ...hidden, text: hidden.text.replaceAll(RUN_TIME_WORD, '<a word known at run time>') };
    const name = argv[0].slice(argv[0].lastIndexOf('/') + 1);
    // trap 'string' SIG...: the string is a script bash runs later.
    if (name === 'trap') {
      for (const a of argv.slice(1, 2)) if (!a.startsWith('-')) hidden ??= this.nested(a, inner, 'command-string', 'trap command string');
    }
    // bash <<'EOF' ... EOF, bash <<< 'cmd': a literal script fed to a shell on stdin.
    if (SHELLS.has(name)) {
      for (const r of list(s.Redirs)) {
        const text = REDIR_HEREDOC.has(r.Op) ? heredocText(r) : r.Op === REDIR_HERESTRING ? wordText(r.Word) : undefined;
        if (text === undefined) continue;
        if (text !== null) hidden = this.nested(text, inner, 'stdin-script', `${name} script on stdin`) ?? hidden;
        else hidden = { kind: 'stdin-script', text: `${name} reads a script with expansions from stdin` };
      }
    }
    const sub: Subcommand = { argv, assignments, inner, redirects: s.Redirs.$length > 0 };
    if (hidden !== undefined) (sub.opaque = hidden.text), (sub.opaqueKind = hidden.kind);
    return sub;
  }

  /**
   * `eval` of words known now, `trap '<string>' SIG...`, `source /absolute/file` read now: the script this
   * same shell runs, analysed. Undefined when it is not known now (the command stays opaque, as before).
   */
  private seeThrough(name: string, args: MvNode[], values: WordValue[]): Through | undefined {
    let text: string | null = null;
    let sourced = this.sourced;
    if (name === 'eval' && args.length > 1) text = evalText(args.slice(1));
    else if (name === 'trap') text = trapString(values);
    else if ((name === 'source' || name === '.') && args.length > 1 && values[1].literal && values[1].value.startsWith('/')) {
      text = this.hooks.readSource(values[1].value);
      sourced = true;
    }
    if (text === null) return undefined;
    const analysis = this.hooks.sameShellScript(text, sourced);
    // Not walked (a parse error, too large, bad bytes): nothing in it is known.
    if (analysis.kind === 'complex' && analysis.unread) return undefined;
    return { what: name === '.' ? 'source' : name, analysis };
  }

  /**
   * The commands of a script this shell runs are literal commands of this one (so a script using eval,
   * trap or source stays complex: plain keeps meaning "exactly these commands, in this list"), with their
   * own assignments and wrappers; a name only known at run time in it is one here too.
   */
  private follow(t: Through): void {
    const a = t.analysis;
    if (a.kind === 'plain') {
      for (const c of a.commands) this.literal.push(c);
      return;
    }
    if (a.opaqueKinds.includes('dynamic-name')) this.dynamicName = true;
    // (already flattened: their inner commands are entries of their own)
    for (const l of a.literalCommands) this.literal.push(l.inner.length > 0 ? { ...l, inner: [] } : l);
  }

  /** Add a script string's literal commands to `inner`; what it hides when it is complex. */
  private nested(script: string, inner: string[][], kind: Hidden['kind'], what: string): Hidden | undefined {
    const r = this.hooks.scriptCommands(script);
    for (const c of r.commands) { inner.push(c.argv); inner.push(...c.inner); }
    return r.complex ? { kind, text: `${what} is complex` } : undefined;
  }

  /**
   * mvdan (and bash-parser) start a comment at a `#` right after a quote or `${..}` (`"x"#y`), where
   * bash keeps reading the word (`x#y`). A node followed directly by `#` was cut short that way.
   */
  private hashAfter(n: MvNode): void {
    const end = n.End().Offset();
    if (this.src[end] !== 0x23) return;
    this.complex(HASH_IN_WORD, n);
    this.hashes.push(end);
  }

  private assign(a: MvNode): void {
    this.hashAfter(a);
    this.word(a.Value);
    this.arith(a.Index);
    if (!nil(a.Array)) for (const e of list(a.Array.Elems)) { this.arith(e.Index); this.word(e.Value); }
  }

  private word(w: MvNode): void {
    if (nil(w)) return;
    this.hashAfter(w);
    for (const p of list(w.Parts)) this.part(p);
  }

  private part(p: MvNode): void {
    switch (nodeType(p)) {
      case 'SglQuoted': if (p.Dollar) this.ansiC.push(span(p)); return;
      case 'Lit': case 'ExtGlob': case 'BraceExp': return;
      case 'DblQuoted': for (const x of list(p.Parts)) this.part(x); return;
      case 'CmdSubst': case 'ProcSubst': return this.stmts(p.Stmts);
      case 'ArithmExp': return this.arith(p.X);
      case 'ParamExp':
        this.arith(p.Index);
        if (!nil(p.Slice)) { this.arith(p.Slice.Offset); this.arith(p.Slice.Length); }
        if (!nil(p.Repl)) { this.word(p.Repl.Orig); this.word(p.Repl.With); }
        if (!nil(p.Exp)) this.word(p.Exp.Word);
        return;
      default: this.complex(`unsupported word part ${nodeType(p)}`, p);
    }
  }

  private arith(x: MvNode): void {
    if (nil(x)) return;
    switch (nodeType(x)) {
      case 'Word': return this.word(x);
      case 'BinaryArithm': this.arith(x.X); return this.arith(x.Y);
      case 'UnaryArithm': case 'ParenArithm': return this.arith(x.X);
      default: this.complex(`unsupported arithmetic ${nodeType(x)}`, x);
    }
  }

  private test(x: MvNode): void {
    if (nil(x)) return;
    switch (nodeType(x)) {
      case 'Word': return this.word(x);
      case 'BinaryTest': this.test(x.X); return this.test(x.Y);
      case 'UnaryTest': case 'ParenTest': return this.test(x.X);
      default: this.complex(`unsupported test ${nodeType(x)}`, x);
    }
  }

  private raw(n: MvNode): string {
    const [a, b] = span(n);
    return this.src.subarray(a, b).toString('utf8');
  }
}

function wordText(w: MvNode): string | null {
  const v = wordValue(w);
  return v.literal ? v.value : null;
}

/**
 * The text a here-document feeds, or null when it has expansions. With a quoted delimiter (<<'EOF')
 * the body is verbatim; otherwise only \\ \$ \` and \newline are escapes, as in bash.
 */
function heredocText(r: MvNode): string | null {
  if (nil(r.Hdoc)) return '';
  const parts = list(r.Hdoc.Parts);
  if (!parts.every((p: MvNode) => nodeType(p) === 'Lit')) return null;
  const raw = parts.map((p: MvNode) => str(p.Value)).join('');
  const delim = list(r.Word.Parts);
  const quoted = delim.some((p: MvNode) => nodeType(p) !== 'Lit' || str(p.Value).includes('\\'));
  return quoted ? raw : raw.replace(/\\([\\$`\n])/g, (_, c: string) => (c === '\n' ? '' : c));
}

/** The command string of `trap [--] '<string>' SIG...`, or null (`trap '' INT`, `trap - EXIT`, `trap -p`, one not literal). */
function trapString(values: WordValue[]): string | null {
  const at = values[1]?.literal && values[1].value === '--' ? 2 : 1;
  const v = values[at];
  if (v === undefined || !v.literal || values.length <= at + 1) return null;
  return v.value === '' || v.value === '-' || (at === 1 && v.value.startsWith('-')) ? null : v.value;
}

/** A builtin seen through: what it is, and the analysis of the script it runs. */
interface Through {
  what: string;
  analysis: ScriptAnalysis;
}

/** Declaration builtins (their operands set variables). */
const DECLARATIONS = new Set(['export', 'declare', 'typeset', 'readonly', 'local']);

export const HASH_IN_WORD = "'#' inside a word (the parsers read a comment)";

const CONSTRUCT: Record<string, string> = {
  Block: 'group { }', Subshell: 'subshell ( )', IfClause: 'if clause', WhileClause: 'while/until loop',
  ForClause: 'for loop', CaseClause: 'case statement', FuncDecl: 'function definition',
  ArithmCmd: 'arithmetic command (( ))', TestClause: 'test clause [[ ]]', DeclClause: 'declaration builtin',
  LetClause: 'let', TimeClause: 'time keyword', CoprocClause: 'coproc',
};
