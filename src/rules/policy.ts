/**
 * A loaded policy: prefix rules indexed by program, host executables, network rules. Matching follows
 * Codex §1.5–1.6 (docs/codex-parity.md); `hardened` adds basename prompt/forbidden matches for any path spelling.
 */
import { strictest, type Decision } from './decision.js';
import { baseName, programPath } from './host-executable.js';
import { compileDomains, type NetworkRule } from './network.js';
import { matchPrefix } from './pattern.js';
import { PolicyError } from './error.js';
import type { PrefixRule, RuleSource } from './rule.js';

export type { RuleSource } from './rule.js';

export interface PrefixRuleMatch {
  type: 'prefixRuleMatch';
  matchedPrefix: string[];
  decision: Decision;
  resolvedProgram?: string;
  justification?: string;
  source: RuleSource;
}
export interface HeuristicsRuleMatch {
  type: 'heuristicsRuleMatch';
  command: string[];
  decision: Decision;
}
export type RuleMatch = PrefixRuleMatch | HeuristicsRuleMatch;
export interface MatchOptions {
  /** §1.6: absolute paths fall back to basename rules (core always true; CLI only with the flag) */
  resolveHostExecutables: boolean;
  /**
   * Newest Codex's restrictive host rules, for the gate: on top of the matches above, basename
   * prompt/forbidden rules also match any path spelling (/opt/x/rm, ./rm, ../bin/rm), ignoring
   * host_executable allowlists; basename allow rules are never added this way.
   */
  hardened: boolean;
  /**
   * Codex 0.169.0's CLI also resolves relative spellings (`./git`, `a/git`) against its working directory
   * and `~/git` against home. Only when given: an allow rule for `git` should not bless `./git` by default.
   */
  cwd?: string;
  home?: string;
}
export type Fallback = (command: string[]) => Decision;
export interface Evaluation {
  decision?: Decision;
  matchedRules: RuleMatch[];
}

export interface PolicyParts {
  rules: readonly PrefixRule[];
  hostExecutables: ReadonlyMap<string, readonly string[]>;
  networkRules: readonly NetworkRule[];
  files: readonly string[];
}

const MEMORY_SOURCE: RuleSource = { file: '<amendment>', line: 0, col: 0 };

export class Policy {
  readonly files: readonly string[];
  readonly ruleCount: number;
  private readonly rules: readonly PrefixRule[];
  private readonly byProgram = new Map<string, PrefixRule[]>();
  private readonly hostExecutables: ReadonlyMap<string, readonly string[]>;
  private readonly networkRules: readonly NetworkRule[];

  constructor(parts: PolicyParts) {
    this.rules = parts.rules;
    this.files = parts.files;
    this.hostExecutables = parts.hostExecutables;
    this.networkRules = parts.networkRules;
    this.ruleCount = parts.rules.length;
    for (const r of parts.rules) {
      const list = this.byProgram.get(r.pattern.first);
      if (list) list.push(r);
      else this.byProgram.set(r.pattern.first, [r]);
    }
  }

  /** The programs that prompt or forbidden rules name (their first words): src/daemon/program-identity.ts */
  guardedPrograms(): string[] {
    return [...this.byProgram].filter(([, rules]) => rules.some((r) => r.decision !== 'allow')).map(([p]) => p);
  }

  /** A rule could match a command run as this program: one names its path, or its name (host executables
   * and gate-sh's hardened matching look rules up by the name). */
  namesProgram(program: string): boolean {
    return this.byProgram.has(program) || this.byProgram.has(program.slice(program.lastIndexOf('/') + 1));
  }

  /** Every prefix rule, in file and call order (`gate rules list`). */
  prefixRules(): readonly PrefixRule[] {
    return this.rules;
  }

  static empty(): Policy {
    return new Policy({ rules: [], hostExecutables: new Map(), networkRules: [], files: [] });
  }

  /** Every rule of the program (in file/call order) matching `command`, with `resolvedProgram` if given. */
  private matchProgram(program: string, command: readonly string[], resolvedProgram: string | undefined, out: PrefixRuleMatch[], skipAllow = false): void {
    const list = this.byProgram.get(program);
    if (!list) return;
    for (const r of list) {
      if (skipAllow && r.decision === 'allow') continue;
      const prefix = matchPrefix(r.pattern, command);
      if (!prefix) continue;
      if (resolvedProgram !== undefined) prefix[0] = program;
      const m: PrefixRuleMatch = { type: 'prefixRuleMatch', matchedPrefix: prefix, decision: r.decision, source: r.source };
      if (resolvedProgram !== undefined) m.resolvedProgram = resolvedProgram;
      if (r.justification !== undefined) m.justification = r.justification;
      out.push(m);
    }
  }

  matchesForCommand(command: string[], opts: MatchOptions, fallback?: Fallback): RuleMatch[] {
    const out: PrefixRuleMatch[] = [];
    const program = command[0];
    if (program !== undefined) {
      this.matchProgram(program, command, undefined, out);
      let resolved = false;
      if (out.length === 0 && opts.resolveHostExecutables) {
        const path = programPath(program, opts);
        const base = path === undefined ? undefined : baseName(path);
        if (path !== undefined && base !== undefined) {
          const allow = this.hostExecutables.get(base);
          if (!allow || allow.includes(path)) {
            resolved = true;
            this.matchProgram(base, command, path, out);
          }
        }
      }
      if (opts.hardened && !resolved && program.includes('/')) {
        // any spelling of a path: the basename's prompt/forbidden rules still apply
        const path = programPath(program, { cwd: opts.cwd ?? '/', home: opts.home ?? '/' });
        const base = path === undefined ? undefined : baseName(path);
        if (base !== undefined && base !== program) this.matchProgram(base, command, program, out, true);
      }
    }
    if (out.length === 0 && fallback) return [{ type: 'heuristicsRuleMatch', command, decision: fallback(command) }];
    return out;
  }

  check(command: string[], opts: MatchOptions, fallback?: Fallback): Evaluation {
    return evaluation(this.matchesForCommand(command, opts, fallback));
  }

  /** Matches of every command concatenated; each unmatched command gets its own fallback entry. */
  checkMultiple(commands: string[][], opts: MatchOptions, fallback?: Fallback): Evaluation {
    const all: RuleMatch[] = [];
    for (const c of commands) all.push(...this.matchesForCommand(c, opts, fallback));
    return evaluation(all);
  }

  /** A new Policy with one more rule appended (in-memory amendment); this one is untouched. */
  withPrefixRule(prefix: string[], decision: Decision, source: RuleSource = MEMORY_SOURCE): Policy {
    if (prefix.length === 0) throw new PolicyError('prefix rule requires at least one token');
    const rule: PrefixRule = { pattern: { first: prefix[0], rest: prefix.slice(1) }, decision, canonicalMatching: false, source };
    return new Policy({ rules: [...this.rules, rule], hostExecutables: this.hostExecutables, networkRules: this.networkRules, files: this.files });
  }

  networkDomains(): { allowed: string[]; denied: string[] } {
    return compileDomains(this.networkRules);
  }

  /** Every network_rule in file/call order, with where it was written (src/decide/network.ts). */
  networkRuleList(): readonly NetworkRule[] {
    return this.networkRules;
  }

  /** Host-executable allowlists by name (read-only view, for diagnostics). */
  hostExecutable(name: string): readonly string[] | undefined {
    return this.hostExecutables.get(name);
  }
}

function evaluation(matchedRules: RuleMatch[]): Evaluation {
  const decision = strictest(matchedRules.map((m) => m.decision));
  return decision === undefined ? { matchedRules } : { decision, matchedRules };
}

/** True iff at least one match came from a rule (not the heuristics fallback). */
export function isPolicyMatch(e: Evaluation): boolean {
  return e.matchedRules.some((m) => m.type === 'prefixRuleMatch');
}
