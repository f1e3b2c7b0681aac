/**
 * Binds the daemon to the policy engine: how rule files are found and loaded (for hot reload), how a
 * Policy becomes a Decider (pre-flight and exec-gate decisions), and how amendments are appended.
 */
import { join } from 'node:path';
import { closeSync, openSync, readSync } from 'node:fs';
import { codexHome, defaultRulesFile, gateHome, loadPolicy } from '../rules/load.js';
import { appendAllowPrefixRule, formatAllowPrefixRule } from '../rules/amend.js';
import type { Policy } from '../rules/policy.js';
import { gatePaths, type Env } from '../protocol/paths.js';
import { assessScript } from '../decide/script.js';
import { toWireSource, type VerdictSource } from '../decide/types.js';
import { decideIntercepted } from '../decide/intercepted.js';
import { decideStartUpExec } from '../decide/start-up.js';
import { lookupSkill, skillsFor, type SkillLookup } from '../skills/lookup.js';
import { approvalKey } from '../decide/approval-key.js';
import type { ExecApprovalRequirement } from '../decide/requirement.js';
import { deny, type Action, type ReviewDecision } from '../protocol/action.js';
import type { Decider, ScriptCheck, SubcommandCheck } from '../decide/decider-types.js';
import type { PolicyLoader } from './policy-watch.js';
import { sameSourcedFiles, sourceReader, type SourcedFile } from './sourced-files.js';
import { ProgramIdentity } from './program-identity.js';
import { basename } from 'node:path';

/** One for the daemon: its hash cache outlives policy reloads. */
const identity = new ProgramIdentity();

export interface BindingOptions {
  env: Env;
  extraFiles: string[];
  gitReadOnly(): boolean;
}

export interface PolicyBinding {
  loader: PolicyLoader<unknown>;
  deciderFor(p: unknown): Decider;
  /** append the allow rule to the default rules file; resolves with the rule line */
  amend(prefix: string[]): Promise<string>;
  amendmentFile: string;
}

export function policyBinding(o: BindingOptions): PolicyBinding {
  const loader: PolicyLoader<unknown> = {
    load: () => loadPolicy({ env: o.env, extraFiles: o.extraFiles }),
    // the folders loadPolicy reads (watched even before they exist) and the extra files
    watchPaths: () => [join(gateHome(o.env), 'rules'), join(codexHome(o.env), 'rules'), join(codexHome(o.env), 'policy'), ...o.extraFiles],
    files: (p) => (p as Policy).files,
  };
  const amendmentFile = defaultRulesFile(o.env);
  return {
    loader,
    deciderFor: (p) => policyDecider(p as Policy, o.env),
    amend: async (prefix) => {
      await appendAllowPrefixRule(amendmentFile, prefix);
      return formatAllowPrefixRule(prefix);
    },
    amendmentFile,
  };
}

/** A file's `#!` line (without `#!`), or null: the first 256 bytes only. */
function shebangOf(path: string): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const head = buf.subarray(0, n).toString('latin1');
    const end = head.indexOf('\n');
    return head.startsWith('#!') && end > 0 ? head.slice(2, end) : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const CACHE_ENTRIES = 2048;
/** complex reasons that say the script was not (or could not be) parsed (src/script/analyze.ts) */
const UNPARSED = /^(parse error|analysis failed|script is not a string|script larger than \d+ bytes$|scripts nested too deeply|NUL byte|invalid UTF|carriage return)/;
const MAX_CACHED_KEY = 16 * 1024;

/** A Decider for one loaded Policy (a reload makes a new one, and with it an empty assessment cache). */
function policyDecider(policy: Policy, trusted: Env): Decider {
  // what no sandbox sees is never read for a script's `source` (see sourced-files.ts)
  const hidden = [gatePaths(trusted).runtime];
  identity.setNames(policy.guardedPrograms());
  const cache = new Map<string, { check: ScriptCheck; sourced: SourcedFile[] }>();
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
        ctxJson = { approval: ctx.approvalPolicy, sandbox: ctx.sandboxPolicy, git: ctx.gitReadOnly, json: JSON.stringify([ctx.approvalPolicy, ctx.sandboxPolicy, ctx.gitReadOnly]) };
      const key = JSON.stringify([req.cwd, req.shell, req.flag, req.sandbox_permissions, req.additional_permissions ?? null, req.prefix_rule ?? null]) + ctxJson.json + req.script;
      const hit = cache.get(key);
      // (a script that sources files is answered again from the cache only while they are unchanged)
      if (hit && (hit.sourced.length === 0 || sameSourcedFiles(hit.sourced))) {
        cache.delete(key); // LRU: move to the back
        cache.set(key, hit);
        return hit.check;
      }
      const reader = sourceReader({ hidden });
      const a = assessScript(req.shell, req.flag, req.script, {
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
      const check: ScriptCheck = {
        complex: a.complex,
        parses: !a.complex_reasons.some((r) => UNPARSED.test(r)),
        perExec: a.per_exec,
        subcommands: a.subcommands.map((s) =>
          toCheck(s, approvalKey({ command: s.argv, cwd: req.cwd, shell: req.shell, sandboxPermissions: req.sandbox_permissions, additionalPermissions: req.additional_permissions, execution: s.execution ?? undefined }), s.kind === 'literal'),
        ),
      };
      // Per exec, a literal command nobody was asked about decides nothing at its exec: it is judged there.
      if (a.per_exec)
        check.subcommands.forEach((c, i) => {
          if (c.literal && c.requirement === 'skip') c.unsettled = true;
          if (a.subcommands[i].kind === 'write') c.write = true;
        });
      if (key.length <= MAX_CACHED_KEY) {
        cache.set(key, { check, sourced: reader.files });
        if (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      }
      return check;
    },
    exec(req, ctx): SubcommandCheck {
      // Skill scripts live under <skill>/scripts/: only then is discovery (file system reads) worth it.
      const found: SkillLookup = req.program.includes('/scripts/') ? lookupSkill(req.program, skillsFor(trusted, req.cwd)) : { kind: 'none' };
      if (found.kind === 'unusable') {
        const argv = [req.program, ...req.argv.slice(1)];
        const key = approvalKey({ command: argv, cwd: req.cwd, sandboxPermissions: ctx.sandboxPermissions });
        const by: VerdictSource = { type: 'heuristic', decision: 'forbidden', name: 'invalid', command: argv };
        return toCheck({ argv, decision: 'forbidden', decided_by: by, action: { type: 'Deny', reason: found.reason } }, key);
      }
      const d = decideIntercepted(req.program, req.argv, req.cwd, {
        policy,
        approvalPolicy: ctx.approvalPolicy,
        sandboxPolicy: ctx.sandboxPolicy,
        sandboxPermissions: ctx.sandboxPermissions,
        additionalPermissions: ctx.additionalPermissions,
        gitReadOnly: ctx.gitReadOnly,
        env: req.env,
        // the daemon's own environment is trusted (same user, started from the agent's environment)
        codeLoading: { trusted },
        ...(found.kind === 'skill' ? { skill: found.exec } : {}),
        ...(req.real_program ? { realProgram: req.real_program } : {}),
        ...knownAs(req),
        shebangOf,
      });
      // One decision per command: what pre-flight settled for this argv + cwd stands (its execution mode
      // too), unless a forbidden rule or an exec-time hardening check (code loading, writable program,
      // skill permissions) says otherwise.
      const action = ctx.settled && !d.hardening && !(d.action !== 'prompt' && d.action.type === 'Deny') ? ctx.settled : d.action;
      // the session-approval key is only looked up for a prompt: not built for every exec that runs
      const key = action === 'prompt' ? approvalKey({ command: d.command, cwd: req.cwd, sandboxPermissions: ctx.sandboxPermissions, additionalPermissions: ctx.additionalPermissions, execution: d.execution }) : '';
      return toCheck({ argv: d.command, decision: d.decision, decided_by: d.decided_by, action, on_approval: d.on_approval, available_decisions: d.available_decisions, reason: d.reason }, key);
    },
    startUp(req, sandboxed): SubcommandCheck {
      const d = decideStartUpExec(policy, { program: req.program, argv: req.argv, realProgram: req.real_program, sandboxed }, { resolveHostExecutables: true, hardened: true });
      const check = toCheck({ argv: d.command, decision: d.decision, decided_by: d.decided_by, action: d.action }, '');
      check.phase = 'start-up';
      return check;
    },
  };
}

interface Judged {
  argv: string[];
  decision: SubcommandCheck['decision'];
  decided_by: VerdictSource;
  action: Action | 'prompt';
  on_approval?: Action;
  available_decisions?: ReviewDecision[];
  proposed_execpolicy_amendment?: string[] | null;
  requirement?: ExecApprovalRequirement;
  reason?: string;
}

/** An assessment entry (pre-flight) or an intercepted-exec decision, as the daemon acts on it. */
/**
 * A denial by a forbidden rule with a justification says the justification and where the rule is, at
 * pre-flight and at exec time alike (the exec gate's own text is Codex's bare `Execution forbidden by
 * policy`): the model reads it ("use trash instead") wherever the denial happens.
 */
function citeRule(reason: string, by: VerdictSource): [Action, string] {
  if (by.type !== 'rule' || by.decision !== 'forbidden' || by.justification === undefined) return [deny(reason), reason];
  const cited = `${reason.includes(by.justification) ? reason : `${reason}: ${by.justification}`} (rule ${by.file}:${by.line})`;
  return [deny(cited), cited];
}

export function toCheck(s: Judged, cacheKey: string, literal = false): SubcommandCheck {
  const by = s.decided_by;
  const req = s.requirement;
  const given = s.reason ?? (req && req.type !== 'skip' ? req.reason ?? undefined : undefined);
  const [requirement, action, reason]: [SubcommandCheck['requirement'], Action, string | undefined] =
    s.action === 'prompt'
      ? ['needs_approval', s.on_approval ?? { type: 'Deny', reason: 'approval gives no action' }, given]
      : s.action.type === 'Deny'
        ? ['forbidden', ...citeRule(s.action.reason, by)]
        : ['skip', s.action, given];
  // one object literal (no spreads of a built object: on the exec-gate path each costs microseconds)
  const check: SubcommandCheck = {
    argv: s.argv,
    decision: s.decision,
    source: [toWireSource(by)],
    requirement,
    reason,
    action,
    matched_rule: by.type === 'rule' ? `${by.file}:${by.line}` : `heuristic:${by.name}`,
    available_decisions: s.available_decisions ?? [],
    cache_key: cacheKey,
  };
  if (s.proposed_execpolicy_amendment) check.proposed_amendment = s.proposed_execpolicy_amendment;
  if (literal) check.literal = true;
  return check;
}

/** The rule name the exec's file is a copy of (same bytes), when its own name is another. The kernel layer
 * names the file the kernel runs; the LD_PRELOAD layer's path is read as the daemon sees it. */
function knownAs(req: { program: string; program_file?: string }): { knownAs?: string } {
  const file = req.program_file ?? (req.program.startsWith('/proc/') ? undefined : req.program);
  const name = file === undefined ? undefined : identity.identify(file);
  return name !== undefined && name !== basename(req.program) ? { knownAs: name } : {};
}
