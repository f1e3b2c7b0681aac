/**
 * Per-exec decisions for complex scripts (docs/strict.md). Where pre-flight would ask about a complex
 * script only because it is complex (the approval policy's heuristic prompt for the whole invocation, no
 * rule, no danger, nothing opaque), the script instead runs with every exec decided when it happens — the
 * exec gate already sees each one — in a sandbox where it cannot write unless a person agreed: the
 * redirections that write a file are asked up front as writes of those paths; with none, the run's
 * sandbox is read-only. Everything pre-flight can decide still is (literal entries stay as they are).
 * Pure.
 *
 * Used for `untrusted` with a restricted turn sandbox (workspace-write, read-only) and no escalation
 * request. Not for `on-request` and the other policies: their whole-script heuristic already allows a
 * complex script in the turn sandbox unasked (a prompt there comes from a rule, danger or an escalation
 * request, which per-exec decisions must not lift), so running it per exec could only add prompts.
 */
import { isAbsolute, resolve } from 'node:path';
import type { DecideContext } from './types.js';
import type { SandboxPolicy } from '../sandbox/index.js';
import type { ComplexScript, RedirectWrite } from '../script/index.js';
import { entryDecision, type Entry } from './entries.js';

/** Redirection targets that write no file of the caller's. */
const HARMLESS_TARGETS = new Set(['/dev/null', '/dev/stdout', '/dev/stderr']);

/** The writes to ask up front, or null when the script cannot be decided per exec. */
export function perExecWrites(ctx: DecideContext, a: ComplexScript, head: Entry): RedirectWrite[] | null {
  if (ctx.approvalPolicy !== 'untrusted') return null;
  if (ctx.sandboxPolicy.type !== 'workspace-write' && ctx.sandboxPolicy.type !== 'read-only') return null;
  if (ctx.sandboxPermissions !== 'use_default' || ctx.skillScript || !ctx.cwd) return null;
  if (entryDecision(head) !== 'prompt' || head.extra.length > 0) return null;
  // a command whose name is only known at run time (`$cmd -rf x`) is never let through by a heuristic
  if (a.opaqueKinds.includes('dynamic-name')) return null;
  // only the approval policy's own prompt for a complex invocation: a rule, danger or opaqueness keeps it
  const sources = head.evaluated.flatMap((e) => e.sources);
  if (!sources.every((s) => s.type === 'heuristic' && (s.decision !== 'prompt' || s.name === 'approval-policy'))) return null;
  if (!a.writes || a.writes.some((w) => w.target === null)) return null;
  return a.writes.filter((w) => !HARMLESS_TARGETS.has(w.target!));
}

const READ_ONLY: SandboxPolicy = { type: 'read-only' };

/**
 * The sandbox a per-exec script's bash runs in — the one fact the daemon's pre-flight reply (its
 * `sandbox`) and `gate explain` both show: read-only, unless the script asks writes up front (it then runs
 * only once they are approved, in the turn sandbox).
 */
export function perExecSandbox(turn: SandboxPolicy, asksWrites: boolean): SandboxPolicy {
  return asksWrites ? turn : READ_ONLY;
}

/**
 * Whether that sandbox is stricter than the turn's: then a write the turn allows fails there because
 * gate-sh chose so, and such a denial is offered as the sandbox-failure rerun even when the script still
 * exits 0 (src/exec/sandbox-denial.ts).
 */
export function narrowsTurn(run: SandboxPolicy, turn: SandboxPolicy): boolean {
  return run.type === 'read-only' && turn.type !== 'read-only';
}

/** The whole invocation, decided per exec: allowed to start; each exec is decided when it happens. */
export function perExecEntry(command: string[]): Entry {
  const source = { type: 'heuristic' as const, decision: 'allow' as const, name: 'per-exec' as const, command };
  return {
    argv: command,
    kind: 'script',
    evaluated: [{ argv: command, role: 'script', decision: 'allow', sources: [source], matches: [] }],
    extra: [],
    amendable: false,
  };
}

/** One redirection that writes a file, asked up front as a write of that path. */
export function writeEntry(w: RedirectWrite, cwd: string): Entry {
  const path = isAbsolute(w.target!) ? w.target! : resolve(cwd, w.target!);
  const argv = ['write', path];
  return {
    argv,
    kind: 'write',
    evaluated: [
      { argv, role: 'command', decision: 'prompt', sources: [{ type: 'heuristic', decision: 'prompt', name: 'per-exec', command: argv }], matches: [] },
    ],
    extra: [],
    ownReason: `the script writes this file (\`${w.op} ${w.target}\` at ${w.at}); every other write fails in its sandbox`,
    amendable: false,
  };
}
