/**
 * Rule files → Policy. Registers `prefix_rule`, `host_executable` and `network_rule` as Starlark builtins,
 * validates every argument with Codex's wording, and checks `match`/`not_match` examples at the end of
 * each file. All or nothing: the first error throws and no Policy is returned.
 */
import type { Decision } from './decision.js';
import { PolicyError } from './error.js';
import { validateName, validatePath } from './host-executable.js';
import { normalizeHost, parseNetworkDecision, parseProtocol, type NetworkRule } from './network.js';
import type { PatternToken } from './pattern.js';
import { Policy } from './policy.js';
import type { PrefixRule } from './rule.js';
import { checkExamples, parseExamples, type PendingExamples } from './examples.js';
import { evaluateModule, expectType, type Builtins } from './starlark/eval.js';
import type { Pos } from './starlark/parser.js';
import { parseModule } from './starlark/parser.js';
import { typeName, type Value } from './starlark/value.js';

export interface PolicySource {
  path: string;
  text: string;
}

function parseDecision(raw: string): Decision {
  if (raw === 'allow' || raw === 'prompt' || raw === 'forbidden') return raw;
  throw new PolicyError(`invalid decision: ${raw}`);
}

function parsePattern(v: Value): { firsts: string[]; rest: PatternToken[] } {
  const items = (v as { items: Value[] }).items;
  if (items.length === 0) throw new PolicyError('invalid pattern element: pattern cannot be empty');
  const tokens: PatternToken[] = items.map((el) => {
    if (typeof el === 'string') return el;
    if (el && typeof el === 'object' && el.kind === 'list') {
      if (el.items.length === 0) throw new PolicyError('invalid pattern element: pattern alternatives cannot be empty');
      for (const a of el.items) {
        if (typeof a !== 'string') throw new PolicyError(`invalid pattern element: pattern alternative must be a string (got ${typeName(a)})`);
      }
      const alts = el.items as string[];
      return alts.length === 1 ? alts[0] : alts;
    }
    throw new PolicyError(`invalid pattern element: pattern element must be a string or list of strings (got ${typeName(el)})`);
  });
  const first = tokens[0];
  const firsts = typeof first === 'string' ? [first] : [...first];
  // newest Codex: a blank program can never be executed, so it is a mistake, not a rule
  if (firsts.some((t) => t.trim() === '')) throw new PolicyError('invalid pattern element: token cannot be empty');
  return { firsts, rest: tokens.slice(1) };
}

export interface ParseOptions {
  /** home folder for `~/...` host_executable paths; without it such paths are rejected */
  home?: string;
}

export function parsePolicy(sources: PolicySource[], opts: ParseOptions = {}): Policy {
  const rules: PrefixRule[] = [];
  const hostExecutables = new Map<string, string[]>();
  const networkRules: NetworkRule[] = [];

  for (const src of sources) {
    const file = src.path;
    const pending: PendingExamples[] = [];
    const guard = <T>(site: Pos, f: () => T): T => {
      try {
        return f();
      } catch (e) {
        // a rule's own error has no location yet: it gets the call site's
        if (e instanceof PolicyError && e.file === undefined) {
          throw new PolicyError(e.reason, { file, line: site.line, col: site.col });
        }
        throw e;
      }
    };
    const builtins: Builtins = {
      prefix_rule: {
        params: [
          { name: 'pattern', required: true },
          { name: 'decision', required: false },
          { name: 'match', required: false },
          { name: 'not_match', required: false },
          { name: 'justification', required: false },
          { name: 'canonical_matching', required: false },
        ],
        call(args, site) {
          const pattern = args.get('pattern')!;
          expectType('pattern', pattern, 'list', site, file);
          const decisionV = args.get('decision');
          if (decisionV !== undefined) expectType('decision', decisionV, 'str', site, file);
          const matchV = args.get('match');
          if (matchV !== undefined) expectType('match', matchV, 'list', site, file);
          const notMatchV = args.get('not_match');
          if (notMatchV !== undefined) expectType('not_match', notMatchV, 'list', site, file);
          const justV = args.get('justification');
          if (justV !== undefined) expectType('justification', justV, 'str', site, file);
          const canonV = args.get('canonical_matching');
          if (canonV !== undefined) expectType('canonical_matching', canonV, 'bool', site, file);
          guard(site, () => {
            const decision = decisionV === undefined ? 'allow' : parseDecision(decisionV as string);
            const { firsts, rest } = parsePattern(pattern);
            const justification = justV as string | undefined;
            if (justification !== undefined && justification.trim() === '') throw new PolicyError('invalid rule: justification cannot be empty');
            const match = parseExamples(matchV);
            const notMatch = parseExamples(notMatchV);
            const source = { file, line: site.line, col: site.col };
            const made = firsts.map((first): PrefixRule => ({ pattern: { first, rest }, decision, justification, canonicalMatching: canonV === true, source }));
            rules.push(...made);
            if (match.length || notMatch.length) pending.push({ rules: made, match, notMatch, site });
          });
          return null;
        },
      },
      host_executable: {
        params: [
          { name: 'name', required: true },
          { name: 'paths', required: true },
        ],
        call(args, site) {
          const name = args.get('name')!;
          expectType('name', name, 'str', site, file);
          const paths = args.get('paths')!;
          expectType('paths', paths, 'list', site, file);
          guard(site, () => {
            validateName(name as string);
            const out: string[] = [];
            for (const p of (paths as { items: Value[] }).items) {
              if (typeof p !== 'string') throw new PolicyError(`invalid rule: host_executable paths must be strings (got ${typeName(p)})`);
              const path = validatePath(name as string, p, opts.home);
              if (!out.includes(path)) out.push(path);
            }
            hostExecutables.set(name as string, out); // last definition wins
          });
          return null;
        },
      },
      network_rule: {
        params: [
          { name: 'host', required: true },
          { name: 'protocol', required: true },
          { name: 'decision', required: true },
          { name: 'justification', required: false },
        ],
        call(args, site) {
          for (const k of ['host', 'protocol', 'decision']) expectType(k, args.get(k)!, 'str', site, file);
          const justV = args.get('justification');
          if (justV !== undefined) expectType('justification', justV, 'str', site, file);
          guard(site, () => {
            const protocol = parseProtocol(args.get('protocol') as string);
            const decision = parseNetworkDecision(args.get('decision') as string);
            if (justV !== undefined && (justV as string).trim() === '') throw new PolicyError('invalid rule: justification cannot be empty');
            const host = normalizeHost(args.get('host') as string);
            networkRules.push({ host, protocol, decision, justification: justV as string | undefined, source: { file, line: site.line, col: site.col } });
          });
          return null;
        },
      },
    };

    try {
      evaluateModule(parseModule(src.text, file), file, builtins);
    } catch (e) {
      // Codex reports everything raised while running the Starlark module under this heading
      if (e instanceof PolicyError) throw new PolicyError(`starlark error: ${e.reason}`, { file: e.file, line: e.line, col: e.col });
      throw e;
    }

    // examples are checked once the whole file is read, so later host_executable() calls count
    for (const p of pending) checkExamples(p, new Map(hostExecutables), file);
  }
  return new Policy({ rules, hostExecutables, networkRules, files: sources.map((s) => s.path) });
}
