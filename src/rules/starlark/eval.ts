/**
 * Evaluates a parsed rule module top to bottom. Names resolve to earlier top-level assignments or to the
 * host's builtins; calling a builtin hands it bound arguments. Errors are PolicyErrors at the call site.
 * As starlark-rust compiles a module before it runs it, a name that is neither assigned anywhere in the module
 * nor a builtin is an error that wins over any evaluation error (a syntax error wins over both); a name
 * assigned only later is "referenced before assignment". Pure; the rules file is untrusted input.
 */
import { PolicyError } from '../error.js';
import type { Expr, Pos, Stmt } from './parser.js';
import { repr, typeName, type Value } from './value.js';

export interface ParamSpec {
  name: string;
  required: boolean;
}
export interface Builtin {
  params: readonly ParamSpec[];
  /** args by parameter name (absent = not given); returns the call's value */
  call(args: Map<string, Value>, site: Pos): Value;
}
export type Builtins = Readonly<Record<string, Builtin>>;

/** Largest string (characters) or list/tuple (items) that `+` may build. */
export const MAX_VALUE_SIZE = 1 << 20;

const tooLarge = `value too large: \`+\` would build more than ${MAX_VALUE_SIZE} items or characters`;

function size(v: Value): number {
  if (typeof v === 'string') return v.length;
  return v && typeof v === 'object' && v.kind !== 'builtin' ? v.items.length : 0;
}

export function evaluateModule(stmts: Iterable<Stmt>, file: string, builtins: Builtins): void {
  const globals = new Map<string, Value>();
  const fail = (p: Pos, msg: string): never => {
    throw new PolicyError(msg, { file, line: p.line, col: p.col });
  };

  const evalExpr = (e: Expr): Value => {
    switch (e.type) {
      case 'string':
      case 'int':
        return e.value;
      case 'name': {
        if (globals.has(e.name)) return globals.get(e.name)!;
        if (e.name === 'True') return true;
        if (e.name === 'False') return false;
        if (e.name === 'None') return null;
        if (Object.hasOwn(builtins, e.name)) return { kind: 'builtin', name: e.name };
        // not yet assigned: which error it is depends on the rest of the module (see the loop below)
        throw new Unassigned(e);
      }
      case 'list':
        return { kind: 'list', items: e.items.map(evalExpr) };
      case 'tuple':
        return { kind: 'tuple', items: e.items.map(evalExpr) };
      case 'add': {
        // `a + b + c + ...` is a left-leaning chain: fold it in a loop, not by recursion
        const chain: Expr[] = [];
        let left: Expr = e;
        while (left.type === 'add') {
          chain.push(left);
          left = left.left;
        }
        let acc = evalExpr(left);
        let owned = false; // acc is a list/tuple this chain built, so it may grow in place (linear, not quadratic)
        for (let k = chain.length - 1; k >= 0; k--) {
          const node = chain[k] as Extract<Expr, { type: 'add' }>;
          const right = evalExpr(node.right);
          if (owned && typeof acc === 'object' && acc && acc.kind !== 'builtin' && typeof right === 'object' && right && right.kind === acc.kind) {
            if (size(acc) + size(right) > MAX_VALUE_SIZE) return fail(node, tooLarge);
            for (const item of right.items) acc.items.push(item);
            continue;
          }
          acc = add(acc, right, node);
          owned = true;
        }
        return acc;
      }
      case 'call': {
        const callee = evalExpr(e.callee);
        if (!callee || typeof callee !== 'object' || callee.kind !== 'builtin') {
          return fail(e, `Operation \`()\` not supported on type \`${typeName(callee)}\``);
        }
        const b = builtins[callee.name];
        return b.call(bind(callee.name, b.params, e.args.map((a) => ({ name: a.name, value: evalExpr(a.value) })), e, fail), e);
      }
    }
  };

  // Statements run as they are parsed (nothing big stays on the heap), but like starlark-rust a syntax
  // error anywhere in the file wins over an evaluation error before it: after a failure we keep parsing.
  let failure: unknown;
  const add = (a: Value, b: Value, at: Pos): Value => {
    // `x = x + x` repeated doubles each time: bound values so a rules file cannot exhaust memory
    if (size(a) + size(b) > MAX_VALUE_SIZE) return fail(at, tooLarge);
    if (typeof a === 'string' && typeof b === 'string') return a + b;
    if (typeof a === 'number' && typeof b === 'number') return a + b;
    if (a && b && typeof a === 'object' && typeof b === 'object' && a.kind === b.kind && a.kind !== 'builtin' && b.kind !== 'builtin') {
      return { kind: a.kind, items: [...a.items, ...b.items] };
    }
    return fail(at, `Operation \`+\` not supported for types \`${typeName(a)}\` and \`${typeName(b)}\``);
  };

  // every top-level name the module assigns, and the first reference to each other name (not a builtin)
  const assigned = new Set<string>();
  const firstRef = new Map<string, Pos>();
  const noteRefs = (root: Expr): void => {
    const stack = [root]; // iterative: an `a + b + ...` chain may be deep
    for (let e = stack.pop(); e; e = stack.pop()) {
      if (e.type === 'name') {
        if (!Object.hasOwn(builtins, e.name) && !CONSTANTS.has(e.name) && !firstRef.has(e.name)) firstRef.set(e.name, e);
      } else if (e.type === 'list' || e.type === 'tuple') for (let k = e.items.length - 1; k >= 0; k--) stack.push(e.items[k]);
      else if (e.type === 'add') stack.push(e.right, e.left);
      else if (e.type === 'call') {
        for (let k = e.args.length - 1; k >= 0; k--) stack.push(e.args[k].value);
        stack.push(e.callee);
      }
    }
  };
  for (const s of stmts) {
    noteRefs(s.type === 'assign' ? s.value : s.expr);
    if (s.type === 'assign') assigned.add(s.name);
    if (failure !== undefined) continue;
    try {
      if (s.type === 'assign') globals.set(s.name, evalExpr(s.value));
      else evalExpr(s.expr);
    } catch (e) {
      failure = e;
    }
  }
  let unresolved: [string, Pos] | undefined;
  for (const [name, at] of firstRef)
    if (!assigned.has(name) && (!unresolved || at.line < unresolved[1].line || (at.line === unresolved[1].line && at.col < unresolved[1].col)))
      unresolved = [name, at];
  if (unresolved) fail(unresolved[1], `Variable \`${unresolved[0]}\` not found`);
  if (failure instanceof Unassigned) fail(failure.at, `Local variable \`${failure.at.name}\` referenced before assignment`);
  if (failure !== undefined) throw failure;
}

const CONSTANTS = new Set(['True', 'False', 'None']);

/** A name read before any assignment to it (internal: becomes one of the two errors above). */
class Unassigned {
  constructor(readonly at: Extract<Expr, { type: 'name' }>) {}
}

function bind(
  fn: string,
  params: readonly ParamSpec[],
  args: { name?: string; value: Value }[],
  site: Pos,
  fail: (p: Pos, msg: string) => never,
): Map<string, Value> {
  const out = new Map<string, Value>();
  const positional = args.filter((a) => a.name === undefined);
  if (positional.length > params.length) fail(site, `Found ${positional.length - params.length} extra positional parameter(s) for call to ${fn}`);
  positional.forEach((a, k) => out.set(params[k].name, a.value));
  const extra: string[] = [];
  for (const a of args) {
    if (a.name === undefined) continue;
    if (!params.some((p) => p.name === a.name)) extra.push(a.name);
    else if (out.has(a.name)) fail(site, `Argument \`${a.name}\` occurs more than once`);
    else out.set(a.name, a.value);
  }
  if (extra.length) fail(site, `Found \`${extra.join('`, `')}\` extra named parameter(s) for call to ${fn}`);
  for (const p of params) if (p.required && !out.has(p.name)) fail(site, `Missing parameter \`${p.name}\` for call to \`${fn}\``);
  return out;
}

/** Type check helper with starlark-rust's wording. */
export function expectType(param: string, v: Value, want: 'list' | 'str' | 'bool', site: Pos, file: string): void {
  const ok = want === 'list' ? !!v && typeof v === 'object' && v.kind === 'list' : want === 'str' ? typeof v === 'string' : typeof v === 'boolean';
  if (!ok) {
    throw new PolicyError(`Type of parameter \`${param}\` doesn't match, expected \`${want}\`, actual \`${typeName(v)} (repr: ${repr(v)})\``, {
      file,
      line: site.line,
      col: site.col,
    });
  }
}
