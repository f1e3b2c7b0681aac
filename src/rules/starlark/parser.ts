/**
 * Parser for the Starlark subset of rule files: top-level statements `name = expr` and expression
 * statements; expressions are literals, names, lists, tuples, calls with positional/keyword arguments and
 * `+`. Any other construct is a PolicyError naming it at file:line:col, never silently skipped.
 */
import { PolicyError } from '../error.js';
import { lex, type Token } from './lexer.js';

export interface Pos {
  line: number;
  col: number;
}
export type Expr =
  | ({ type: 'string'; value: string } & Pos)
  | ({ type: 'int'; value: number } & Pos)
  | ({ type: 'name'; name: string } & Pos)
  | ({ type: 'list'; items: Expr[] } & Pos)
  | ({ type: 'tuple'; items: Expr[] } & Pos)
  | ({ type: 'add'; left: Expr; right: Expr } & Pos)
  | ({ type: 'call'; callee: Expr; args: Arg[]; end: Pos } & Pos);
export interface Arg {
  name?: string;
  value: Expr;
  pos: Pos;
}
export type Stmt = ({ type: 'assign'; name: string; value: Expr } & Pos) | ({ type: 'expr'; expr: Expr } & Pos);

const KEYWORDS: Record<string, string> = {
  def: 'function definition (def)', if: 'if statement', elif: 'elif', else: 'else', for: 'for loop', while: 'while loop',
  load: 'load()', lambda: 'lambda', return: 'return', pass: 'pass', break: 'break', continue: 'continue',
  and: 'boolean operator (and)', or: 'boolean operator (or)', not: 'boolean operator (not)', in: 'in operator',
  import: 'import', class: 'class', try: 'try', with: 'with', yield: 'yield', global: 'global', nonlocal: 'nonlocal',
  assert: 'assert', del: 'del', raise: 'raise', is: 'is operator', as: 'as', from: 'from', finally: 'finally', except: 'except',
};

const OP_NAMES: Record<string, string> = {
  '.': 'attribute access (.)', '[': 'indexing or slicing ([...])', '{': 'dict literal ({...})', '%': 'operator %',
  '*': 'operator * or *args', '**': 'operator ** or **kwargs', '-': 'operator -', '/': 'operator /', '//': 'operator //',
  '==': 'comparison ==', '!=': 'comparison !=', '<': 'comparison <', '>': 'comparison >', '<=': 'comparison <=',
  '>=': 'comparison >=', '+=': 'augmented assignment (+=)', '&': 'operator &', '|': 'operator |', '^': 'operator ^',
  '~': 'operator ~', '<<': 'operator <<', '>>': 'operator >>', ':': 'slice or annotation (:)', '@': 'decorator (@)',
  '->': 'annotation (->)',
};

/** Statements one at a time: the evaluator runs each as soon as it is parsed. */
/** Deepest nesting of brackets and calls accepted. */
export const MAX_NESTING = 200;

export function parseModule(text: string, file: string): Iterable<Stmt> {
  return new Parser(lex(text, file), file).module();
}

class Parser {
  private nesting = 0;
  /** lookahead buffer: at most two tokens are ever looked at ahead */
  private readonly buf: Token[] = [];
  constructor(
    private readonly toks: Iterator<Token, void, undefined>,
    private readonly file: string,
  ) {}

  private peekAt(k: number): Token {
    while (this.buf.length <= k) {
      const r = this.toks.next();
      // the lexer always ends with eof; keep returning it
      this.buf.push(r.done ? this.buf[this.buf.length - 1] : r.value);
    }
    return this.buf[k];
  }
  private peek(): Token {
    return this.peekAt(0);
  }
  private next(): Token {
    const t = this.peekAt(0);
    this.buf.shift();
    return t;
  }
  private isOp(v: string): boolean {
    const t = this.peek();
    return t.kind === 'op' && t.value === v;
  }
  private fail(t: Token, msg: string): never {
    throw new PolicyError(msg, { file: this.file, line: t.line, col: t.col });
  }
  private unexpected(t: Token, expected: string): never {
    if (t.kind === 'ident' && Object.hasOwn(KEYWORDS, t.value)) this.fail(t, `unsupported Starlark construct: ${KEYWORDS[t.value]}`);
    if (t.kind === 'op' && Object.hasOwn(OP_NAMES, t.value)) this.fail(t, `unsupported Starlark construct: ${OP_NAMES[t.value]}`);
    this.fail(t, `Parse error: unexpected ${describe(t)}, expected ${expected}`);
  }
  private expectOp(v: string): Token {
    const t = this.peek();
    if (t.kind !== 'op' || t.value !== v) this.unexpected(t, `symbol '${v}'`);
    return this.next();
  }

  *module(): Generator<Stmt, void, undefined> {
    for (;;) {
      const t = this.peek();
      if (t.kind === 'eof') return;
      if (t.kind === 'newline') {
        this.next();
        continue;
      }
      if (t.kind === 'indent') this.fail(t, 'Parse error: unexpected new indentation block, expected expression');
      yield this.statement();
      while (this.isOp(';')) {
        this.next();
        if (this.peek().kind === 'newline') break;
        yield this.statement();
      }
      const end = this.peek();
      if (end.kind !== 'newline' && end.kind !== 'eof') this.unexpected(end, 'new line');
    }
  }

  private statement(): Stmt {
    const t = this.peek();
    if (t.kind === 'ident' && Object.hasOwn(KEYWORDS, t.value)) this.unexpected(t, 'statement');
    const nxt = this.peekAt(1);
    if (t.kind === 'ident' && nxt.kind === 'op' && nxt.value === '=') {
      this.next();
      this.next();
      return { type: 'assign', name: t.value, value: this.expression(), line: t.line, col: t.col };
    }
    const expr = this.expression();
    if (this.isOp('=') || this.isOp(',')) this.fail(this.peek(), 'unsupported Starlark construct: assignment to anything but a plain name');
    return { type: 'expr', expr, line: t.line, col: t.col };
  }

  private expression(): Expr {
    let left = this.primary();
    while (this.isOp('+')) {
      this.next();
      const right = this.primary();
      left = { type: 'add', left, right, line: left.line, col: left.col };
    }
    const t = this.peek();
    if (
      t.kind === 'ident' &&
      (t.value === 'if' || t.value === 'for' || t.value === 'in' || t.value === 'and' || t.value === 'or' || t.value === 'not' || t.value === 'is')
    ) {
      this.fail(t, `unsupported Starlark construct: ${t.value === 'for' ? 'comprehension' : t.value === 'if' ? 'conditional expression' : KEYWORDS[t.value]}`);
    }
    if (t.kind === 'op' && Object.hasOwn(OP_NAMES, t.value) && t.value !== ':') this.unexpected(t, 'expression');
    return left;
  }

  private primary(): Expr {
    const t = this.next();
    // bounded recursion: a file of 100,000 `[` must give an error, not a stack overflow
    if (++this.nesting > MAX_NESTING) this.fail(t, `nesting too deep (more than ${MAX_NESTING} levels)`);
    try {
      return this.primaryInner(t);
    } finally {
      this.nesting--;
    }
  }

  private primaryInner(t: Token): Expr {
    let e: Expr;
    switch (t.kind) {
      case 'string':
        e = { type: 'string', value: t.value, line: t.line, col: t.col };
        break;
      case 'int':
        e = { type: 'int', value: Number(t.value.replace(/^0[oO]/, '0o')), line: t.line, col: t.col };
        break;
      case 'ident':
        if (Object.hasOwn(KEYWORDS, t.value)) this.unexpected(t, 'expression');
        e = { type: 'name', name: t.value, line: t.line, col: t.col };
        break;
      case 'op':
        if (t.value === '[') {
          e = { type: 'list', items: this.sequence(']'), line: t.line, col: t.col };
        } else if (t.value === '(') {
          if (this.isOp(')')) {
            this.next();
            e = { type: 'tuple', items: [], line: t.line, col: t.col };
            break;
          }
          const first = this.expression();
          if (this.isOp(')')) {
            this.next();
            e = first; // parenthesised expression
          } else {
            this.expectOp(',');
            e = { type: 'tuple', items: [first, ...this.sequence(')')], line: t.line, col: t.col };
          }
        } else {
          this.unexpected(t, 'expression');
        }
        break;
      default:
        this.unexpected(t, 'expression');
    }
    // postfix: only calls
    for (;;) {
      if (this.isOp('(')) {
        this.next();
        const args = this.arguments();
        const end = this.expectOp(')');
        e = { type: 'call', callee: e, args, end: { line: end.line, col: end.col }, line: e.line, col: e.col };
        continue;
      }
      if (this.isOp('.') || this.isOp('[')) this.unexpected(this.peek(), 'expression');
      return e;
    }
  }

  /** items up to the closing bracket, trailing comma allowed */
  private sequence(close: string): Expr[] {
    const items: Expr[] = [];
    while (!this.isOp(close)) {
      items.push(this.expression());
      if (this.isOp(',')) this.next();
      else if (!this.isOp(close)) this.unexpected(this.peek(), `symbol '${close}'`);
    }
    this.next();
    return items;
  }

  private arguments(): Arg[] {
    const args: Arg[] = [];
    const seen = new Set<string>();
    while (!this.isOp(')')) {
      const t = this.peek();
      if (this.isOp('*') || this.isOp('**')) this.fail(t, `unsupported Starlark construct: ${t.value === '*' ? '*args' : '**kwargs'} in a call`);
      const nxt = this.peekAt(1);
      if (t.kind === 'ident' && nxt.kind === 'op' && nxt.value === '=') {
        this.next();
        this.next();
        if (seen.has(t.value)) this.fail(t, 'repeated named argument');
        seen.add(t.value);
        args.push({ name: t.value, value: this.expression(), pos: { line: t.line, col: t.col } });
      } else {
        if (seen.size) this.fail(t, 'positional argument after named argument');
        args.push({ value: this.expression(), pos: { line: t.line, col: t.col } });
      }
      if (this.isOp(',')) this.next();
      else if (!this.isOp(')')) this.unexpected(this.peek(), "symbol ')'");
    }
    return args;
  }
}

function describe(t: Token): string {
  switch (t.kind) {
    case 'string':
      return `string literal ${JSON.stringify(t.value)}`;
    case 'ident':
      return `identifier ${t.value}`;
    case 'int':
      return `integer literal ${t.value}`;
    case 'newline':
      return 'new line';
    case 'indent':
      return 'new indentation block';
    case 'eof':
      return 'end of file';
    default:
      return `symbol '${t.value}'`;
  }
}
