/**
 * The cached Decider for one loaded Policy: pre-flight (a script's subcommands, from decideScript), an
 * intercepted exec (decideIntercepted) and a start-up exec (decideStartUpExec), each as the one
 * SubcommandResult the daemon acts on. Pure but for what the daemon hands it in DeciderIo (the files a
 * script sources, skill discovery, program identity, `#!` lines): the decider itself reads nothing.
 * A reload makes a new decider, and with it an empty cache.
 */
import type { Policy } from '../rules/index.js';
import type { SkillLookup } from '../skills/index.js';
import type { CodeLoadingOptions } from '../heuristics/index.js';
import { decideScript } from './script.js';
import type { DecidedBy } from './types.js';
import { reusableForAnyArgv, reusableInScope } from './reuse.js';
import { decideIntercepted } from './intercepted.js';
import { decideStartUpExec } from './start-up.js';
import type { KernelCommand } from './shebang.js';
import { writableRootsFor } from './exec-writable.js';
import { approvalKey } from './approval-key.js';
import { toResult } from './result.js';
import { provenanceOf, type Provenance } from './provenance.js';
import type { Decider, ScriptResult, SubcommandResult } from './decider-types.js';

/** A reader of the files one script sources, and what it read (compared again before a cached answer). */
export interface SourceReading<F> {
  read(path: string): string | null;
  readonly files: F[];
}

/** The daemon's I/O edge, as the decider needs it (src/daemon/policy-binding.ts supplies it). */
export interface DeciderIo<F> {
  /** the daemon's own environment: trusted for the code-loading check */
  trusted: CodeLoadingOptions['trusted'];
  readSources(): SourceReading<F>;
  /** the files a cached answer read are still the ones read */
  sameSources(files: readonly F[]): boolean;
  /** the skill a program under `<skill>/scripts/` belongs to */
  skillFor(program: string, cwd: string): SkillLookup;
  /** the policy's guarded programs changed (a new policy) */
  guardPrograms(names: readonly string[]): void;
  /** the rule name the exec's file is a copy of, when its own name is another */
  knownAs(req: { program: string; program_file?: string }): string | undefined;
  /** a file's `#!` line (without `#!`), or null */
  shebangOf(path: string): string | null;
  /** the exec's file is a `#!` script: what the kernel runs for it (src/decide/shebang.ts), else null */
  kernelCommand(req: ScriptExec): KernelCommand | null | 'unreadable';
}

/** What the kernel-command reading needs of an exec request (ExecRequest). */
export interface ScriptExec {
  program: string;
  program_file?: string;
  argv: readonly string[];
  cwd: string;
  kernel_argv?: string[];
}

const CACHE_ENTRIES = 2048;
/** complex reasons that say the script was not (or could not be) parsed (src/script/analyze.ts) */
const UNPARSED =
  /^(parse error|analysis failed|script is not a string|script larger than \d+ bytes$|scripts nested too deeply|NUL byte|invalid UTF|carriage return)/;
const MAX_CACHED_KEY = 16 * 1024;
/** What runs in the run's own bash (or as the model's text) though the script does not spell it out: a sourced
 * file, an eval's or a command string's text, a command named at run time (ScriptResult.foreignText). */
const FOREIGN_TEXT: ReadonlySet<string> = new Set(['source', 'eval', 'command-string', 'dynamic-name']);

export function policyDecider<F>(policy: Policy, io: DeciderIo<F>): Decider {
  io.guardPrograms(policy.guardedPrograms());
  const cache = new Map<string, { result: ScriptResult; sourced: F[] }>();
  let ctxJson: { approval?: unknown; sandbox?: unknown; git?: boolean; json: string } = { json: '' };
  return {
    name: `per-subcommand assessment, ${policy.ruleCount} rules`,
    preflight(req, ctx) {
      // Pure in these inputs (the cwd only enters the session-cache keys), so repeated scripts skip the
      // parsers and the key building.
      // The session's policies change rarely: encoded once per change (compared by identity: a config change
      // replaces the value, never mutates it: setConfigValue). Each part is self-delimiting JSON and the
      // script comes last, so the key is unambiguous without escaping the script.
      if (ctx.approvalPolicy !== ctxJson.approval || ctx.sandboxPolicy !== ctxJson.sandbox || ctx.gitReadOnly !== ctxJson.git)
        ctxJson = {
          approval: ctx.approvalPolicy,
          sandbox: ctx.sandboxPolicy,
          git: ctx.gitReadOnly,
          json: JSON.stringify([ctx.approvalPolicy, ctx.sandboxPolicy, ctx.gitReadOnly]),
        };
      const key =
        JSON.stringify([req.cwd, req.shell, req.flag, req.sandbox_permissions, req.additional_permissions ?? null, req.prefix_rule ?? null]) +
        ctxJson.json +
        req.script;
      const hit = cache.get(key);
      // (a script that sources files is answered again from the cache only while they are unchanged)
      if (hit && (hit.sourced.length === 0 || io.sameSources(hit.sourced))) {
        cache.delete(key); // LRU: move to the back
        cache.set(key, hit);
        return hit.result;
      }
      const reader = io.readSources();
      const a = decideScript(req.shell, req.flag, req.script, {
        policy,
        approvalPolicy: ctx.approvalPolicy,
        sandboxPolicy: ctx.sandboxPolicy,
        sandboxPermissions: req.sandbox_permissions,
        additionalPermissions: req.additional_permissions,
        prefixRule: req.prefix_rule ?? null,
        gitReadOnly: ctx.gitReadOnly,
        readSource: reader.read,
        cwd: req.cwd,
      });
      const result: ScriptResult = {
        ...(a.subcommands.some((s) => s.opaque_kind !== undefined && FOREIGN_TEXT.has(s.opaque_kind)) ? { foreignText: true as const } : {}),
        complex: a.complex,
        parses: !a.complex_reasons.some((r) => UNPARSED.test(r)),
        perExec: a.per_exec,
        perExecSandbox: a.per_exec_sandbox,
        sandboxNarrowed: a.sandbox_narrowed,
        subcommands: a.subcommands.map((s) =>
          toResult(
            s,
            approvalKey({
              command: s.argv,
              cwd: req.cwd,
              shell: req.shell,
              sandboxPermissions: req.sandbox_permissions,
              additionalPermissions: req.additional_permissions,
              execution: s.execution ?? undefined,
            }),
            s.kind === 'literal',
          ),
        ),
      };
      // Per exec, a literal command nobody was asked about decides nothing at its exec: it is decided there.
      if (a.per_exec)
        result.subcommands.forEach((c, i) => {
          if (c.literal && c.requirement === 'skip') c.unsettled = true;
          if (a.subcommands[i].kind === 'write') c.write = true;
        });
      if (key.length <= MAX_CACHED_KEY) {
        cache.set(key, { result, sourced: reader.files });
        if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      }
      return result;
    },
    exec(req, ctx): SubcommandResult {
      // Skill scripts live under <skill>/scripts/: only then is discovery (file system reads) worth it.
      const found: SkillLookup = req.program.includes('/scripts/') ? io.skillFor(req.program, req.cwd) : { kind: 'none' };
      if (found.kind === 'unusable') {
        const argv = [req.program, ...req.argv.slice(1)];
        const key = approvalKey({ command: argv, cwd: req.cwd, sandboxPermissions: ctx.sandboxPermissions });
        const by: DecidedBy = { type: 'heuristic', decision: 'forbidden', name: 'invalid', command: argv };
        return toResult({ argv, decision: 'forbidden', decided_by: by, action: { type: 'Deny', reason: found.reason } }, key);
      }
      const knownAs = io.knownAs(req);
      const kernelCommand = io.kernelCommand(req);
      // read from /proc once, when the decision or its reuse needs it
      let known: Provenance | undefined;
      const read = (): Provenance => {
        const p = provenanceOf(ctx.ancestry!(), [req.program, ...req.argv]);
        return ctx.foreignText && p.widen ? { ...p, widen: false } : p;
      };
      const provenance = ctx.ancestry ? () => (known ??= read()) : undefined;
      const d = decideIntercepted(req.program, req.argv, req.cwd, {
        policy,
        approvalPolicy: ctx.approvalPolicy,
        sandboxPolicy: ctx.sandboxPolicy,
        sandboxPermissions: ctx.sandboxPermissions,
        additionalPermissions: ctx.additionalPermissions,
        gitReadOnly: ctx.gitReadOnly,
        env: req.env,
        // the daemon's own environment is trusted (same user, started from the agent's environment)
        codeLoading: { trusted: io.trusted, ...(ctx.writable ? { writableRoots: writableRootsFor(ctx.sandboxPolicy, undefined, ctx.writable) } : {}) },
        ...(found.kind === 'skill' ? { skill: found.exec } : {}),
        ...(req.real_program ? { realProgram: req.real_program } : {}),
        ...(knownAs !== undefined ? { knownAs } : {}),
        shebangOf: io.shebangOf,
        ...(provenance ? { provenance } : {}),
        ...(kernelCommand !== null ? { kernelCommand } : {}),
      });
      // One decision per command: what pre-flight settled for this argv + cwd stands (its execution mode
      // too), unless a forbidden rule or an exec-time hardening check (code loading, writable program,
      // skill permissions) says otherwise, or an allow rule takes this exec out of the sandbox where the
      // settlement kept it in: pre-flight assessed the script as a whole (out of the sandbox only when a
      // rule allows every subcommand), the exec gate judges each exec as Codex's intercepted execs are (a
      // rule's allow runs it outside), so `true; git push` escalates its push as `git push` alone does.
      const leaves = d.action !== 'prompt' && d.action.type === 'Escalate' && d.decided_by.type === 'rule';
      const keep = ctx.settled && !(ctx.settled.type === 'Run' && leaves);
      const action = keep && !d.hardening && !(d.action !== 'prompt' && d.action.type === 'Deny') ? ctx.settled! : d.action;
      // the session-approval key is only looked up for a prompt: not built for every exec that runs
      const key =
        action === 'prompt'
          ? approvalKey({
              command: d.command,
              cwd: req.cwd,
              sandboxPermissions: ctx.sandboxPermissions,
              additionalPermissions: ctx.additionalPermissions,
              execution: d.execution,
            })
          : '';
      const result = toResult(
        {
          argv: d.command,
          decision: d.decision,
          decided_by: d.decided_by,
          action,
          on_approval: d.on_approval,
          available_decisions: d.available_decisions,
          reason: d.reason,
        },
        key,
      );
      if (kernelCommand !== null && kernelCommand !== 'unreadable') result.runs = [kernelCommand.program, ...kernelCommand.argv.slice(1)];
      if (d.provenance?.widen) result.widened = true;
      const own = action === d.action;
      const reuse = { program: req.program, argv: req.argv, realProgram: req.real_program, knownAs, skill: found.kind === 'skill', ownAnswer: own };
      if (kernelCommand === null && reusableForAnyArgv(policy, d, reuse)) result.reusable = true;
      else if (kernelCommand === null && ctx.scoped && provenance) {
        const scope = reusableInScope(policy, d, reuse, provenance);
        if (scope) result.reuseScope = scope;
      }
      return result;
    },
    startUp(req, sandboxed): SubcommandResult {
      const d = decideStartUpExec(
        policy,
        { program: req.program, argv: req.argv, realProgram: req.real_program, sandboxed },
        { resolveHostExecutables: true, hardened: true },
      );
      const result = toResult({ argv: d.command, decision: d.decision, decided_by: d.decided_by, action: d.action }, '');
      result.phase = 'start-up';
      return result;
    },
  };
}
