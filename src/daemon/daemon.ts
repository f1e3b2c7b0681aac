/**
 * The daemon's core: handles request-channel messages (ping, preflight, exec, run-finished) with the live
 * policy, the approval broker, the session cache and the run table, and writes the audit log. Transport
 * lives in protocol/server.ts, the approval channel in approval-server.ts, process lifecycle in main.ts.
 */
import { randomUUID } from 'node:crypto';
import { encodePreflightReply, ProtocolError, type Envelope } from '../protocol/codec.js';
import { PROTOCOL_VERSION, type Ack, type DecisionSource, type ExecReply, type ExecRequest, type PreflightReply, type PreflightRequest, type Reply, type SessionSandboxReply, type SubcommandVerdict } from '../protocol/messages.js';
import { deny, formatAction, reviewDecisionKind, RUN, type Action } from '../protocol/action.js';
import { isRestricted, type SandboxPolicy } from '../sandbox/policy.js';
import { EncodedReply, errorReply, type HandlerContext } from '../protocol/server.js';
import { validateExec, validatePreflight, validateRunFinished, validateSessionSandbox, validateStartUpEnd } from '../protocol/validate.js';
import { keyMatches, startUpRefusal } from './start-up.js';
import { formatApprovalPolicy, type Decider, type ScriptResult, type SessionPolicies, type SubcommandResult } from '../decide/index.js';
import { formatAllowPrefixRule, shlexJoin } from '../rules/index.js';
import { configView, setConfigValue, type GateConfig } from '../config/config.js';
import type { GatePaths } from '../protocol/paths.js';
import { outcomeAction, overall, shortCommand } from './answer.js';
import { ApprovalBroker, type ApprovalOutcome } from './approvals.js';
import type { AuditLog, AuditRecord } from './audit.js';
import type { EscalationRunner } from './escalation.js';
import { RandomIds } from './random-ids.js';
import { ExecPairs, pairKey } from './exec-pairs.js';
import type { PolicyWatcher } from './policy-watch.js';
import { newSettlement, RunTable, scriptKey, settledAction, settledScript, settleKey, type RunRecord, type Settlement } from './runs.js';
import { extractShellInvocation } from '../script/shell-detect.js';
import { SessionCache } from './session-cache.js';
import type { Approver } from './approver.js';
import type { PromptEvent, RiskAssessment } from '../protocol/approval.js';
import { assessRisk } from './risk-assessor.js';
import { clientPlan, nativeRequest, type PlanRequest } from '../exec/client-plan.js';
import { denialReason, sandboxDenial } from '../exec/sandbox-denial.js';
import { rerunJustification } from '../exec/sandbox-rerun.js';
import type { SessionJob, SessionSandboxes } from './session-sandbox.js';
import { joinWirePlan } from './session-sandbox-plan.js';

export interface DaemonDeps<P> {
  paths: GatePaths;
  config: GateConfig;
  policy: PolicyWatcher<P>;
  deciderFor(policy: P): Decider;
  /** append an allow prefix_rule to the default rules file; resolves with the rule line */
  amend(prefix: string[]): Promise<string>;
  audit: AuditLog;
  escalation: EscalationRunner;
  log(line: string): void;
  /** ask the process to shut down (approval channel `stop`) */
  requestStop(): void;
  /** the key a client outside the sandbox shows to ask for a start-up phase (src/daemon/start-up.ts);
   * none: no run gets one */
  startUpKey?: string;
  /** the session sandboxes that gated runs join (src/daemon/session-sandbox.ts); none: every run makes its own */
  sessions?: SessionSandboxes;
}

const GRANT_TTL_MS = 30_000;
const READ_ONLY: SandboxPolicy = { type: 'read-only' };

/** How one subcommand was settled: its Action, and who besides the policy had a say. */
interface Settled {
  action: Action;
  outcome?: ApprovalOutcome;
  extraSource?: DecisionSource;
}

interface CheckKeys {
  cwd: string;
  settle: string;
  /** set for a `bash -c '<script>'` subcommand */
  script?: string;
  /** the audit fields after kind and run_id when the policy's answer stands (see auditFields) */
  audit?: string;
}

/** A run record names its script; a long one is cut (each subcommand's own record has its words). */
function clip(script: string): string {
  return script.length > 4096 ? `${script.slice(0, 4096)}… (${script.length} characters)` : script;
}

/** The execution mode an allowed Action runs with: Run runs in place, in the caller's (turn) sandbox. */
function executionMode(action: Action): string | undefined {
  if (action.type === 'Run') return 'TurnDefault';
  if (action.type !== 'Escalate') return undefined;
  const e = action.execution;
  return e.type === 'Permissions' ? `Permissions ${JSON.stringify(e.profile)}` : e.type;
}

/** A decision's audit record from `cwd` on, JSON without braces (AuditLog.writeEncoded). */
function auditFields(s: SubcommandResult, { action, outcome, extraSource }: Settled, cwd: string): string {
  const rec: Omit<AuditRecord, 'time' | 'session' | 'kind' | 'run_id'> = {
    cwd,
    argv: s.argv,
    source: extraSource?.kind === 'session' || extraSource?.kind === 'parent-run' ? extraSource.kind : s.matched_rule,
    decision: s.decision,
    action: formatAction(action),
    execution: executionMode(action),
    phase: s.phase,
    approval_id: outcome?.approval_id,
    approver: outcome?.approver,
    answer: outcome ? reviewDecisionKind(outcome.decision) : undefined,
  };
  return JSON.stringify(rec).slice(1, -1);
}

/** The i-th warm-up pre-flight: the shapes real scripts have (lists, pipes, redirections, substitutions,
 * quoting, loops, nested shells), each made unique by i. */
function warmUpRequest(i: number): PreflightRequest {
  const shapes = [
    `cd /tmp && ls -la | grep x${i}; echo "$(date)" > /dev/null`,
    `git status && git diff --stat HEAD~${i} | tail -n 3`,
    `npm test -- --grep 'case ${i}' 2>&1 | tee /tmp/out${i}.log`,
    `for f in *.ts; do wc -l "$f"; done > /dev/null; echo ${i}`,
    `x=${i}; if [ "$x" -gt 1 ]; then echo "big \${x}"; else printf '%s\\n' small; fi`,
    `bash -c 'echo nested ${i}' && cat <<'EOF'\nbody ${i}\nEOF`,
    `find . -name '*.md' -newer a${i} -exec head -1 {} \\; | sort -u | head`,
    `python3 -c "print(${i})" || make -j2 build-${i} && sed -i 's/a/b/' f${i}.txt`,
  ];
  return { v: PROTOCOL_VERSION, id: `warm-up-${i}`, type: 'preflight', shell: 'bash', flag: i % 2 ? '-lc' : '-c', script: shapes[i % shapes.length], cwd: '/', pid: process.pid, sandbox_permissions: 'use_default' };
}

export class Daemon<P> {
  config: GateConfig;
  readonly broker: ApprovalBroker;
  readonly cache = new SessionCache();
  readonly runs = new RunTable();
  readonly startedAt = new Date();
  private decider: Decider;
  private deciderPolicy: P;
  readonly counters = { preflight: 0, exec: 0, prompts: 0, denied: 0, paired: 0 };
  /** execs the LD_PRELOAD layer was told to run, awaiting the kernel layer's report of them */
  private readonly pairs = new ExecPairs();
  private readonly checkKeys = new WeakMap<SubcommandResult, CheckKeys>();
  private readonly verdictsJson = new WeakMap<ScriptResult, string>();
  private readonly settlements = new WeakMap<ScriptResult, Map<string, Settlement>>();
  private lastRequestAt = 0;
  /** warm-up scripts decided so far, of how many (ping's info shows it) */
  private readonly warmUpState = { done: 0, of: 0 };
  /** escalation tokens: 192 random bits, as escalation.ts's newEscalationToken, from a pool */
  private readonly tokens = new RandomIds(24);

  constructor(private readonly deps: DaemonDeps<P>) {
    this.config = deps.config;
    this.broker = new ApprovalBroker(() => this.config.approval_timeout_ms, (a) => this.mayAsk(a));
    this.deciderPolicy = deps.policy.current;
    this.decider = deps.deciderFor(this.deciderPolicy);
  }

  /** The request-channel handler. */
  async handle(msg: Envelope, ctx: HandlerContext): Promise<Reply | EncodedReply> {
    this.lastRequestAt = Date.now();
    try {
      switch (msg.type) {
        case 'ping':
          return { v: PROTOCOL_VERSION, id: msg.id, type: 'ack', info: this.info() } satisfies Ack;
        case 'preflight':
          return await this.preflight(msg, ctx);
        case 'exec':
          return await this.exec(msg, ctx);
        case 'run-finished':
          return this.runFinished(msg);
        case 'start-up-end':
          return this.startUpEnd(msg);
        case 'session-sandbox': {
          const req = validateSessionSandbox(msg);
          const join = (await this.deps.sessions?.join(req.key, req.own_network)) ?? null;
          return { v: PROTOCOL_VERSION, id: msg.id, type: 'session-sandbox', join } satisfies SessionSandboxReply;
        }
      }
      throw new ProtocolError('unknown-type', `unknown message type '${msg.type}' (expected ping, preflight, exec, start-up-end or run-finished)`, msg.id);
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      this.deps.log(`request ${msg.id} rejected (${e.code}): ${e.message}`);
      return errorReply(msg.id, e.code, e.message);
    } finally {
      // the records of this request's decisions are in the log before its reply leaves (one write for all)
      this.deps.audit.flush();
    }
  }

  /**
   * Decide throw-away scripts so the parsers are loaded and compiled before real clients: one now, then
   * more up to `scripts`, one per timer turn, once the daemon is `afterMs` old and only while no client has
   * asked anything for `idleMs`. A script the daemon has not seen costs ~10 ms with cold parsers, ~6 ms
   * after 150 and ~2.5 ms after 400 (measured); each must be new (a repeat is an assessment-cache hit and
   * compiles nothing). About a second of idle CPU, once, for a daemon that lives long enough to gain from
   * it (a short-lived one, as in tests, never pays).
   */
  warmUp({ scripts = 400, afterMs = 10_000, idleMs = 100 }: { scripts?: number; afterMs?: number; idleMs?: number } = {}): void {
    this.warmUpState.of = scripts;
    const decide = (i: number): void => {
      try {
        this.currentDecider().preflight(warmUpRequest(i), this.decideContext());
      } catch (e) {
        this.deps.log(`warm-up script ${i}: ${(e as Error).message}`); // a cold parser is slow, not wrong
      }
    };
    let next = 0;
    // one now (loads and compiles the parsers for the first client); each further cold one would add ~40 ms
    // to the daemon's start, which an autostarting gate-sh waits for
    if (scripts > 0) decide(next++);
    this.warmUpState.done = next;
    // a step blocks for a few ms, so it waits while clients are being answered
    const step = (): void => {
      if (next >= scripts) return;
      const busy = Date.now() - this.lastRequestAt < idleMs;
      if (!busy) {
        decide(next++);
        this.warmUpState.done = next;
      }
      setTimeout(step, busy ? idleMs : 0).unref(); // never what keeps a stopping daemon alive
    };
    setTimeout(step, afterMs).unref();
  }

  info(): Record<string, unknown> {
    return { pid: process.pid, session: this.deps.paths.session, protocol: PROTOCOL_VERSION, started_at: this.startedAt.toISOString(), decider: this.decider.name, warm_up: { ...this.warmUpState } };
  }

  private currentDecider(): Decider {
    const p = this.deps.policy.current;
    if (p !== this.deciderPolicy) {
      this.deciderPolicy = p;
      this.decider = this.deps.deciderFor(p);
    }
    return this.decider;
  }

  private decideContext(): SessionPolicies {
    return { approvalPolicy: this.config.approval_policy, sandboxPolicy: this.config.sandbox_policy, gitReadOnly: this.config.git_read_only };
  }

  private async preflight(msg: Envelope, ctx: HandlerContext): Promise<PreflightReply | EncodedReply> {
    const req = validatePreflight(msg);
    this.counters.preflight++;
    // what the Node client derives from its arguments, for the native gate-sh (src/exec/client-plan.ts)
    if (req.plan) nativeRequest(req as PreflightRequest & { plan: PlanRequest });
    const check = this.currentDecider().preflight(req, this.decideContext());
    const parent = req.parent_run ? this.runs.get(req.parent_run) : undefined;
    const run = this.runs.create({ cwd: req.cwd, pid: req.pid, root_pid: parent?.root_pid ?? req.pid, sandbox_permissions: req.sandbox_permissions, additional_permissions: req.additional_permissions, command: [req.shell, req.flag, clip(req.script)] });
    // an interactive session's next line: the session bash's execs (under session_run) reuse this line's answers
    const session = req.session_run ? this.runs.get(req.session_run) : undefined;
    if (session) session.current = run.run_id;
    // A forbidden subcommand anywhere: nothing runs, so nobody is asked anything.
    const anyForbidden = check.subcommands.some((s) => s.requirement === 'forbidden');
    // A nested `bash -c '<script>'` whose enclosing run settled exactly this script (the person saw it
    // whole, as one command) is not asked again: one decision per command.
    const covered = parent ? settledScript(parent, scriptKey(req.script, req.cwd)) : undefined;
    const inherited: DecisionSource | undefined = covered === undefined || !parent ? undefined : { kind: 'parent-run', run_id: parent.run_id, ...(covered ? { approval_id: covered } : {}) };
    const quick = check.subcommands.map((s) => this.answerWithoutAsking(s, anyForbidden, inherited));
    const nobodyAsked = quick.every((q) => q !== undefined);
    // the policy's own answers stand (the common case): what they settle is the same for every such run
    const policyOwn = nobodyAsked && quick.every((q, i) => q!.action === check.subcommands[i].action && !q!.extraSource);
    if (policyOwn) run.shared = this.sharedSettlement(check, req.cwd);
    // ask: false (an agent's hook): what needs a person is answered, not asked; the hook's agent asks its user
    const unasked = (s: SubcommandResult): Settled => ({ action: deny(s.reason ?? `approval needed for '${shortCommand(s.argv)}'`) });
    const verdicts = nobodyAsked
      ? check.subcommands.map((s, i) => this.record(s, quick[i]!, policyOwn ? undefined : run, 'preflight', req.cwd, run.run_id)) // no promises
      : req.ask === false
        ? check.subcommands.map((s, i) => this.record(s, quick[i] ?? unasked(s), run, 'preflight', req.cwd, run.run_id))
        : await this.settleAll(check, run, req, ctx, anyForbidden, inherited);
    const reply: PreflightReply = { v: PROTOCOL_VERSION, id: req.id, type: 'preflight', run_id: run.run_id, action: overall(verdicts.filter((v, i) => v.action.type === 'Deny' || !check.subcommands[i].literal).map((v) => v.action)), complex: check.complex, subcommands: verdicts, sandbox: this.config.sandbox_policy };
    if (check.perExec && reply.action.type !== 'Deny') {
      // decided per exec: the script cannot write unless a person agreed to the writes it asked up front
      reply.per_exec = true;
      if (!check.subcommands.some((s) => s.write)) reply.sandbox = READ_ONLY;
    }
    if (req.start_up && reply.action.type !== 'Deny' && this.grantStartUp(req, check, run)) {
      reply.start_up = true;
      // A script whose every command an allow rule lets out runs in the turn sandbox instead, with those
      // commands escalated at their execs (as settled): the start-up files then run sandboxed in place,
      // not each sent out and back in. Only a plain script: what a complex one does in bash itself (a
      // redirection, a builtin) has no exec to escalate, so an approved escalation of it keeps bash outside.
      // A Permissions run keeps its profile; its start-up execs go into the turn sandbox one by one.
      if (!check.complex && reply.action.type === 'Escalate' && reply.action.execution.type === 'Unsandboxed' && isRestricted(this.config.sandbox_policy)) reply.action = RUN;
      const a = reply.action;
      run.startUp = { sandboxed: a.type === 'Run' || (a.type === 'Escalate' && a.execution.type === 'TurnDefault') };
    }
    if (req.plan) {
      reply.plan = clientPlan(req as PreflightRequest & { plan: PlanRequest }, reply, this.deps.paths.requestSock);
      // a turn-sandbox attempt (the one offered the rerun) joins its session sandbox, as the Node client's does
      if (this.deps.sessions && reply.plan.rerun) reply.plan = await joinWirePlan(reply.plan, req.plan.env, this.deps.sessions);
    }
    // The policy's own answers for a cached script encode to the same verdict text every time: once.
    if (!policyOwn) return reply;
    let json = this.verdictsJson.get(check);
    if (json === undefined) this.verdictsJson.set(check, (json = JSON.stringify(verdicts)));
    return new EncodedReply(encodePreflightReply(reply, json));
  }

  /** Settle every subcommand of a script, asking the questions it raises all at once. */
  private async settleAll(check: ScriptResult, run: RunRecord, req: PreflightRequest, ctx: HandlerContext, anyForbidden: boolean, inherited?: DecisionSource): Promise<SubcommandVerdict[]> {
    const asked: string[] = [];
    const verdicts = await Promise.all(
      check.subcommands.map((s) =>
        this.settle(
          s,
          run,
          'preflight',
          req.cwd,
          anyForbidden,
          (id) => {
            asked.push(id);
            ctx.setPending([...asked]);
          },
          run.run_id,
          req.justification,
          inherited,
        ).then((v) => {
          // One denial decides the script: withdraw the questions still open.
          if (v.action.type === 'Deny' && asked.length) this.broker.cancel(asked, 'another subcommand of the script was denied');
          return v;
        }),
      ),
    );
    ctx.setPending(null);
    return verdicts;
  }

  private async exec(msg: Envelope, ctx: HandlerContext): Promise<ExecReply> {
    const req = validateExec(msg);
    const kernel = req.layer === 'kernel';
    // one decision per exec: the kernel layer's report of an exec the LD_PRELOAD layer was just told to run
    if (kernel && req.pair_run !== undefined && !nameless(req.program) && this.pairs.take(pairKey(req.pair_run, req), Date.now())) {
      this.counters.paired++;
      return { v: PROTOCOL_VERSION, id: req.id, type: 'exec', action: { type: 'Run' } };
    }
    this.counters.exec++;
    const run = this.runs.get(req.run_id);
    if (run?.startUp) {
      // never settled into the run: the script's own `id -u` is not covered by the profile's
      const s = this.currentDecider().startUp(req, run.startUp.sandboxed);
      return this.execReply(req, this.record(s, { action: s.action }, undefined, 'exec', req.cwd, req.run_id).action);
    }
    // The exec-time checks always run (forbidden rules, code-loading variables, writable programs, skills);
    // the decider reuses what pre-flight settled for this argv + cwd only where they add nothing.
    const check = this.currentDecider().exec(req, {
      approvalPolicy: this.config.approval_policy,
      sandboxPolicy: this.config.sandbox_policy,
      gitReadOnly: this.config.git_read_only,
      sandboxPermissions: run?.sandbox_permissions ?? 'use_default',
      additionalPermissions: run?.additional_permissions,
      settled: this.settledFor(run, settleKey(req.argv, req.cwd)),
    });
    const v = await this.settle(check, run, 'exec', req.cwd, false, (id) => ctx.setPending([id]), req.run_id);
    ctx.setPending(null);
    return this.execReply(req, v.action);
  }

  private execReply(req: ExecRequest, action: Action): ExecReply {
    const reply: ExecReply = { v: PROTOCOL_VERSION, id: req.id, type: 'exec', action };
    const kernel = req.layer === 'kernel';
    // an Escalate pairs like a Run: the kernel layer lets it go on in place, the LD_PRELOAD layer escalates
    if (!kernel && (action.type === 'Run' || action.type === 'Escalate') && !nameless(req.program)) this.pairs.add(pairKey(req.run_id, req), Date.now());
    // the kernel layer cannot hand over descriptors: it lets an Escalate run in place (inside the sandbox),
    // and its supervisor hands the token to the new program's LD_PRELOAD layer, which escalates with it
    // (one decision, not a second one from that program's constructor; shims/gate-launch.c, "landed")
    if (action.type === 'Escalate') {
      const token = this.tokens.next();
      this.deps.escalation.grant({ token, run_id: req.run_id, program: req.program, argv: req.argv, cwd: req.cwd, execution: action.execution, env: req.env, expires_at: Date.now() + GRANT_TTL_MS });
      reply.escalation_token = token;
    }
    return reply;
  }

  /** What this run settled for an argv+cwd, or (an interactive session's run) what its current line did. */
  private settledFor(run: RunRecord | undefined, key: string): Action | undefined {
    if (!run) return undefined;
    const current = run.current !== undefined ? this.runs.get(run.current) : undefined;
    return settledAction(run, key) ?? (current ? settledAction(current, key) : undefined);
  }

  /** What a cached script's own policy answers settle in a cwd: made once, shared by every run of it there. */
  private sharedSettlement(check: ScriptResult, cwd: string): Settlement {
    let byCwd = this.settlements.get(check);
    if (!byCwd) this.settlements.set(check, (byCwd = new Map()));
    let st = byCwd.get(cwd);
    if (!st) {
      st = newSettlement();
      for (const s of check.subcommands) if (s.action.type !== 'Deny' && !s.unsettled) this.settleInto(st, s, s.action, '', cwd);
      // a script run from many folders would grow this without bound: keep the latest few
      if (byCwd.size >= 16) byCwd.delete(byCwd.keys().next().value!);
      byCwd.set(cwd, st);
    }
    return st;
  }

  private settleInto(st: Settlement, s: SubcommandResult, action: Action, approvalId: string, cwd: string): void {
    const keys = this.keysOf(s, cwd);
    st.settled.set(keys.settle, action);
    if (keys.script !== undefined) st.scripts.set(keys.script, approvalId);
  }

  /** A start-up phase for this run, when the client outside the sandbox asked with the key and nothing the
   * agent could have written takes part in start-up (src/daemon/start-up.ts). */
  private grantStartUp(req: PreflightRequest, check: ScriptResult, run: RunRecord): boolean {
    const key = this.deps.startUpKey;
    if (!key || !req.start_up || !keyMatches(key, req.start_up.key) || !check.parses) return false;
    const refused = startUpRefusal({ req: req.start_up, policy: this.config.sandbox_policy, cwd: req.cwd, since: this.startedAt });
    if (refused) {
      this.deps.audit.write({ kind: 'run', run_id: run.run_id, cwd: req.cwd, detail: `no start-up phase: ${refused}` });
      return false;
    }
    return true;
  }

  /** The client says bash has read its start-up files: every later exec of the run is the script's. */
  private startUpEnd(msg: Envelope): Reply {
    const req = validateStartUpEnd(msg);
    const run = this.runs.get(req.run_id);
    if (run) run.startUp = undefined;
    return { v: PROTOCOL_VERSION, id: req.id, type: 'ack' };
  }

  private runFinished(msg: Envelope): Reply {
    const req = validateRunFinished(msg);
    const run = this.runs.finish(req.run_id);
    this.deps.audit.write({ kind: 'run', run_id: req.run_id, cwd: run?.cwd, argv: run?.command, exit_status: req.exit_status, duration_ms: req.duration_ms, ...(run ? {} : { detail: 'unknown run' }) });
    if (req.stderr_tail === undefined) return { v: PROTOCOL_VERSION, id: req.id, type: 'ack' };
    // the native gate-sh asks whether its failed sandboxed attempt was a sandbox denial (the on-failure rerun)
    const denial = sandboxDenial(req.exit_status, req.stderr_tail);
    return { v: PROTOCOL_VERSION, id: req.id, type: 'ack', info: denial ? { why: denialReason(denial), justification: rerunJustification(denialReason(denial)) } : {} };
  }

  /**
   * The answer that needs nobody asked: forbidden, no approval needed, not asked because another subcommand
   * is forbidden, approved earlier this session, or covered by the enclosing run. Undefined: ask a human.
   */
  private answerWithoutAsking(s: SubcommandResult, skipPrompt: boolean, inherited?: DecisionSource): Settled | undefined {
    if (s.requirement === 'forbidden' || s.requirement === 'skip') return { action: s.action };
    if (skipPrompt) return { action: deny('not asked: another subcommand of the script is forbidden') };
    const cached = this.cache.has(s.cache_key);
    if (cached) return { action: s.action, extraSource: { kind: 'session', approval_id: cached } };
    if (inherited) return { action: s.action, extraSource: inherited };
    return undefined;
  }

  /** From a check to an Action: cache, prompt, amendment; records the run's settled decision and audits. */
  private async settle(
    s: SubcommandResult,
    run: RunRecord | undefined,
    origin: 'preflight' | 'exec',
    cwd: string,
    skipPrompt: boolean,
    onAsk: (approvalId: string) => void,
    runId = run?.run_id ?? '-',
    /** the caller's own words (preflight `justification`), shown when no rule gave a reason */
    justification?: string,
    /** the enclosing run already settled this whole script */
    inherited?: DecisionSource,
  ): Promise<SubcommandVerdict> {
    const quick = this.answerWithoutAsking(s, skipPrompt, inherited);
    if (quick) return this.record(s, quick, run, origin, cwd, runId);
    this.counters.prompts++;
    const cmd = shortCommand(s.argv); // only a prompt shows it (shell-quoting costs on the hot path)
    const prompt = {
      run_id: runId,
      origin,
      command: s.argv,
      display: cmd,
      cwd,
      // the caller's own words first when it gave any (Codex shows the justification); the gate's reason too
      reason: justification ? (s.reason && s.reason !== justification ? `${justification} (gate: ${s.reason})` : justification) : s.reason,
      matched_rule: s.matched_rule,
      proposed_execpolicy_amendment: s.proposed_amendment,
      amendment_rule: s.proposed_amendment ? formatAllowPrefixRule(s.proposed_amendment) : undefined,
      available_decisions: s.available_decisions,
      requested_permissions: run?.additional_permissions,
      sandbox_permissions: run?.sandbox_permissions,
      client_pid: run?.root_pid,
    };
    const approvalId = randomUUID();
    onAsk(approvalId);
    const risk = await this.assess(prompt, approvalId);
    const ask = this.broker.ask(risk ? { ...prompt, risk_assessment: risk } : prompt, approvalId);
    const outcome = await ask.done;
    const action = await this.applyAnswer(s, outcome, cmd);
    return this.record(s, { action, outcome, extraSource: { kind: 'approval', approval_id: outcome.approval_id, answer: reviewDecisionKind(outcome.decision), approver: outcome.approver } }, run, origin, cwd, runId);
  }

  /** A settled subcommand: remembered in its run (for the exec gate and nested shells), audited, answered. */
  private record(s: SubcommandResult, settled: Settled, run: RunRecord | undefined, origin: 'preflight' | 'exec', cwd: string, runId: string): SubcommandVerdict {
    const { action, outcome, extraSource } = settled;
    if (action.type === 'Deny') this.counters.denied++;
    else if (run && !(s.unsettled && !outcome)) this.settleInto((run.own ??= newSettlement()), s, action, outcome?.approval_id ?? (extraSource?.kind === 'session' ? extraSource.approval_id : ''), cwd);
    // A pre-flight check comes from the decider's cache, and when the policy's own answer stands (the common
    // case) its audit fields are the same every time: encoded once. Exec-gate checks are new each time.
    const reused = origin === 'preflight' && action === s.action && !outcome && !extraSource;
    const fields = reused ? (this.keysOf(s, cwd).audit ??= auditFields(s, settled, cwd)) : auditFields(s, settled, cwd);
    this.deps.audit.writeEncoded(`"kind":"${origin === 'preflight' ? 'decision' : 'exec'}","run_id":${JSON.stringify(runId)},${fields}`);
    const verdict: SubcommandVerdict = { argv: s.argv, decision: s.decision, action, source: extraSource ? [...s.source, extraSource] : s.source };
    if (outcome) verdict.approval_id = outcome.approval_id;
    return verdict;
  }

  /** The run-table keys of a check in a cwd, computed once per cached check (repeated scripts reuse it). */
  private keysOf(s: SubcommandResult, cwd: string): CheckKeys {
    let k = this.checkKeys.get(s);
    if (k?.cwd !== cwd) {
      const inv = extractShellInvocation(s.argv);
      k = { cwd, settle: settleKey(s.argv, cwd), script: inv ? scriptKey(inv.script, cwd) : undefined };
      this.checkKeys.set(s, k);
    }
    return k;
  }

  /** Side effects of an approval (session cache, amendment), then the Action the client gets. */
  private async applyAnswer(s: SubcommandResult, o: ApprovalOutcome, cmd: string): Promise<Action> {
    const d = o.decision;
    if (!o.auto && d === 'approved_for_session') this.cache.add(s.cache_key, o.approval_id);
    if (!o.auto && typeof d === 'object') {
      const prefix = d.approved_execpolicy_amendment.proposed_execpolicy_amendment;
      try {
        const line = await this.deps.amend(prefix);
        this.deps.log(`amendment appended: ${line}`);
      } catch (e) {
        // The human approved this run; a failed append only loses the "next time" part. Say so loudly.
        this.deps.log(`amendment for ${shlexJoin(prefix)} could not be saved: ${(e as Error).message}`);
      }
    }
    return outcomeAction(o, s.action, cmd, this.config.approval_timeout_ms, s.reason);
  }

  /** `reject.mcp_elicitations`: MCP elicitation approvers are never asked; the other approvers still are. */
  private mayAsk(a: Approver): boolean {
    const p = this.config.approval_policy;
    return !(a.kind === 'mcp-elicitation' && typeof p === 'object' && p.reject.mcp_elicitations);
  }

  /** The optional risk assessor's view of a prompt (only when someone will see it); advisory, never a decision. */
  private async assess(prompt: Omit<PromptEvent, 'approval_id' | 'created_at'>, approvalId: string): Promise<RiskAssessment | undefined> {
    const assessor = this.config.risk_assessor;
    if (assessor === undefined || !this.broker.hasApproverFor({ ...prompt, approval_id: approvalId, created_at: '' })) return undefined;
    const { command, display, cwd, reason, matched_rule, origin, sandbox_permissions } = prompt;
    return assessRisk(
      { command, display, cwd, reason, matched_rule, origin, sandbox_permissions },
      { assessor, onFailure: (why) => this.deps.log(`${approvalId}: ${why}`) },
    );
  }

  /** Run-time configuration change from the approval channel. */
  setConfig(key: string, value: string, by: string): GateConfig {
    this.config = setConfigValue(this.config, key, value, `config set by ${by}`);
    this.deps.audit.write({ kind: 'config', approver: by, detail: `${key} = ${value}` });
    this.deps.log(`config: ${key} = ${value} (by ${by})`);
    return this.config;
  }

  status(): Record<string, unknown> {
    const w = this.deps.policy;
    return {
      ...this.info(),
      paths: { request: this.deps.paths.requestSock, approval: this.deps.paths.approvalSock, audit_log: this.deps.audit.path },
      policy: {
        files: w.files,
        loaded_at: w.loadedAt.toISOString(),
        reloads: w.reloads,
        last_reload_error: w.lastError ? { message: w.lastError.message, at: w.lastError.at.toISOString() } : null,
      },
      approval_policy: formatApprovalPolicy(this.config.approval_policy),
      sandbox_policy: this.config.sandbox_policy,
      config: configView(this.config),
      approvers: this.broker.approverNames(),
      pending: this.broker.pendingPrompts(),
      runs: this.runs.size,
      session_approvals: this.cache.size,
      counters: this.counters,
      session_sandboxes: this.deps.sessions?.status(),
    };
  }

  /** What runs in the session sandboxes (approval channel `jobs`). */
  sessionJobs(): SessionJob[] {
    return this.deps.sessions?.jobs() ?? [];
  }

  /** Approval channel `jobs-kill`: a process of a session sandbox (host pid), or all of them. */
  killJobs(target: number | 'all'): number {
    const n = this.deps.sessions?.kill(target) ?? 0;
    this.deps.audit.write({ kind: 'job', detail: `killed on request: ${target === 'all' ? 'all jobs' : `pid ${target}`} (${n} process${n === 1 ? '' : 'es'})` });
    return n;
  }

  stop(): void {
    this.deps.requestStop();
  }
}

/** A program without a name of its own (a memfd, a deleted file): the LD_PRELOAD layer's answer for it was
 * given without its contents, so the kernel layer's report of it is always decided (it names the file). */
function nameless(program: string): boolean {
  return program.startsWith('/memfd:') || program.endsWith(' (deleted)');
}
