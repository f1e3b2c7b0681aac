/**
 * bash-parser 0.5.0 (unmaintained, pinned) called the way its own `parse` does, without its per-call
 * overheads, which were two thirds of a typical analysis:
 * - the posix mode, the AST builder, the lexer pipeline and the parser are built once, not per call
 *   (each is a stateless function of the options; per-input state lives in the iterators they return);
 * - its tokenizer deep-copies the location with JSON.parse(JSON.stringify()) for every character;
 *   the same copy is made field by field (same fields, same fresh objects, so the same aliasing).
 * Same grammar, same reducers, same AST, same errors: test/unit/script/bash-parser-call.test.ts compares it
 * with `require('bash-parser')` on every corpus script.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { cacheData, runCommonJs } from './code-cache.js';

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

/** bash-parser's parts bundled into one file by the build (scripts/bash-parser-entry.cjs): dist/cjs-src/,
 * from dist/src/script/ and from the daemon's bundle in dist/cjs-src/daemon/ alike. */
const BUNDLE = fileURLToPath(new URL('../../cjs-src/bash-parser.bundle.cjs', import.meta.url));

interface Parts {
  utils: any;
  shellLexer: any;
  compose: any;
  reducers: any;
  posix: any;
}

/** The parts from the build's bundle, compiled with its code cache (one file instead of 87: ~60 ms of the
 * daemon's first request); from the package itself when there is no bundle. */
function parts(): Parts {
  try {
    const source = readFileSync(BUNDLE, 'utf8');
    const id = /^\/\/ gate-sh-build ([0-9a-f]{16,64})\n/.exec(source.slice(0, 100))?.[1] ?? '';
    return runCommonJs(BUNDLE, source, cacheData(BUNDLE.replace(/\.cjs$/, '.v8cache'), id)) as Parts;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  const req = createRequire(createRequire(import.meta.url).resolve('bash-parser'));
  return {
    utils: req('./utils'),
    shellLexer: req('./shell-lexer'),
    compose: req('compose-function'),
    reducers: req('./modes/posix/tokenizer/reducers'),
    posix: req('./modes/posix'),
  };
}

function load(): Parse {
  const { utils, shellLexer, compose, reducers, posix } = parts();
  const mode = posix.init(null, utils);
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
  return (state, source, reducers) => {
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
