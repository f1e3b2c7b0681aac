/**
 * bash-parser 0.5.0 (unmaintained, pinned) called the way its own `parse` does, without its per-call
 * overheads, which were two thirds of a typical analysis:
 * - the posix mode, the AST builder, the lexer pipeline and the parser are built once, not per call
 *   (each is a stateless function of the options; per-input state lives in the iterators they return);
 * - its tokenizer deep-copies the location with JSON.parse(JSON.stringify()) for every character;
 *   the same copy is made field by field (same fields, same fresh objects, so the same aliasing).
 * Same grammar, same reducers, same AST, same errors: test/script/bash-parser-call.test.ts compares it
 * with `require('bash-parser')` on every corpus script.
 */
import { createRequire } from 'node:module';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type BpNode = { type: string; [k: string]: any };
type Parse = (src: string) => BpNode;
type Reducer = (state: any, source: unknown, reducers: unknown) => unknown;

const OPTIONS = { insertLOC: true, mode: 'posix' } as const;

let parseCache: Parse | undefined;

/** bash-parser's AST of `src` with locations (throws what bash-parser throws). */
export function bashParse(src: string): BpNode {
  parseCache ??= load();
  return parseCache(src);
}

/** The stock bash-parser, for the equivalence test. */
export function stockBashParse(src: string): BpNode {
  return (createRequire(import.meta.url)('bash-parser') as (s: string, o: object) => BpNode)(src, { insertLOC: true });
}

function load(): Parse {
  const req = createRequire(createRequire(import.meta.url).resolve('bash-parser'));
  const utils = req('./utils');
  const shellLexer = req('./shell-lexer');
  const compose = req('compose-function');
  const reducers = req('./modes/posix/tokenizer/reducers');
  const mode = req('./modes/posix').init(null, utils);
  const options = { ...OPTIONS };
  const fast = { ...reducers, start: fastStart(reducers.start) };
  // shell-lexer's setInput composes the tokenizer and the phases per input; compose them once instead
  // (the tokenizer is a generator function: every input gets its own state).
  const phases = [mode.tokenizer(options, fast)];
  for (const phase of mode.lexerPhases) phases.push(phase(options, mode, [...phases]));
  const tokenize = compose(...phases.reverse());
  const lexer = shellLexer(mode, options);
  lexer.setInput = function (this: { tokenizer: unknown }, source: string) {
    this.tokenizer = tokenize(source);
  };
  // jison's parse works on its own copies of the lexer and of yy: one parser serves every call.
  const parser = new mode.grammar.Parser();
  parser.lexer = lexer;
  parser.yy = mode.astBuilder(options);
  return (src) => {
    try {
      return parser.parse(src);
    } catch (err) {
      // bash-parser's own wrapping, so that error texts stay the same
      if (err instanceof SyntaxError) throw err;
      const e = err as { stack?: string; message?: string };
      throw new Error(e.stack || e.message);
    }
  };
}

const PATCHED = Symbol('gate-sh fast advanceLoc');

/**
 * The tokenizer always starts with `start`: give the state class of this run the fast advanceLoc.
 * (`start` runs once per character: this wrapper must stay cheap.)
 */
function fastStart(start: Reducer): Reducer {
  return function (state, source, reducers) {
    if (state[PATCHED] !== true) {
      const proto = Object.getPrototypeOf(state);
      proto.advanceLoc = advanceLoc;
      proto[PATCHED] = true;
    }
    return start(state, source, reducers);
  };
}

interface Pos { col: number; row: number; char: number }
interface Loc { start: Pos | null; previous: Pos | null; current: Pos }

const copy = (p: Pos | null): Pos | null => (p === null || p === undefined ? null : { col: p.col, row: p.row, char: p.char });

/** bash-parser's mutable-state advanceLoc with the JSON round trip written out. */
function advanceLoc(this: { loc: Loc; current: string; setLoc(l: Loc): unknown }, char: string | undefined): unknown {
  const loc: Loc = { start: copy(this.loc.start), previous: copy(this.loc.current), current: copy(this.loc.current) as Pos };
  if (char === '\n') {
    loc.current.row++;
    loc.current.col = 1;
  } else {
    loc.current.col++;
  }
  loc.current.char++;
  if (char && /\s/.test(char) && this.current === '') loc.start = { ...loc.current };
  return this.setLoc(loc);
}
