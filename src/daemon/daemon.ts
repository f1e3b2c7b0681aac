/**
 * The daemon's core: dispatches request-channel messages (ping, preflight, exec, start-up-end,
 * run-finished, session-sandbox) and decides each subcommand with the live policy's decider, the approval
 * broker, the session cache and the run table, writing the audit log. Its parts are in their own files:
 * warm-up samples (warm-up.ts), what settled subcommands leave behind (settlements.ts), the prompt and the
 * risk call (prompt-event.ts), an answer's side effects (approved.ts), audit encoding (audit-fields.ts),
 * the status view (status.ts). Transport lives in transport/server.ts, the approval channel in
 * approval-server.ts, process lifecycle in main.ts. Trust: every request is untrusted (validated first).
 */
import { randomUUID } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type GatePaths, replyFolder, STOP_NOTE_FILE } from '../paths/index.js';
import type { ClientFolders } from './client-folders.js';
import { peerFolder } from './peer-folder.js';
import {
  type Ack,
  type Action,
  type DecisionSource,
  deny,
  encodePreflightReply,
  type Envelope,
  type ExecReply,
  type ExecRequest,
  type PreflightReply,
  type PreflightRequest,
  PROTOCOL_VERSION,
  ProtocolError,
  type Reply,
  type ReusePreset,
  type ReuseScope,
  reviewDecisionKind,
  RUN,
  type SandboxNarrowing,
  type SessionSandboxReply,
  type SubcommandReply,
  validateExec,
  validateExecReused,
  validatePreflight,
  validateRunFinished,
  validateSessionSandbox,
  validateSessionSandboxStale,
  validateStartUpEnd,
} from '../protocol/index.js';
import { isCodeLoadingName } from '../heuristics/index.js';
import { isRestricted, networkRules, samePolicy, type SandboxPolicy, SandboxPolicyError, stricterSandbox } from '../sandbox/index.js';
import { RunSandboxes, runAtMost } from './run-sandbox.js';
import { EncodedReply, errorReply, type HandlerContext, NO_REPLY } from '../transport/index.js';
import { keyMatches, startUpRefusal } from './start-up.js';
import type { Ancestry, Decider, ExecContext, ScriptResult, SessionPolicies, SubcommandResult } from '../decide/index.js';
import { callerSettings, type GateConfig, setConfigValue, settingsConflict } from '../config/index.js';
import { overall, shortCommand } from './answer.js';
import { displayCommand } from '../text/index.js';
import { ApprovalBroker } from './approvals.js';
import type { AuditLog } from './audit.js';
import type { EscalationGrant, EscalationRunner } from './escalation.js';
import { RandomIds } from './random-ids.js';
import { ExecPairs, pairKey } from './exec-pairs.js';
import { AncestryReader, execBelowProgram } from './provenance.js';
import type { PolicyWatcher } from './policy-watch.js';
import { newSettlement, RunTable, scriptKey, settledScript, settleKey, type RunRecord } from './runs.js';
import { SessionCache } from './session-cache.js';
import type { Approver } from './approver.js';
import { clientPlan, denialReason, envRecord, nativeRequest, type PlanRequest, rerunJustification, sandboxDenial } from '../exec/index.js';
import type { SessionJob, SessionSandboxes } from './session-sandbox.js';
import type { Granted, ReuseGrants } from './reuse-grants.js';
import { MAX_PRESETS, PresetMemo, presetsFor } from './reuse-presets.js';
import { joinWirePlan } from './session-sandbox-plan.js';
import { auditFields, reusedHead, reusedTail, type Decided } from './audit-fields.js';
import { warmUp, type WarmUpOptions } from './warm-up.js';
import { Settlements, settledFor } from './settlements.js';
import { promptFor, riskFor } from './prompt-event.js';
import { secretAccessFor } from './secret-prompt.js';
import { applyAnswer } from './approved.js';
import { statusView } from './status.js';
import { PlantWatch } from './planted.js';
import { gitEscalationRefusal, realFolder } from './git-trust.js';
import { SANDBOXED_PERIODS_FILE, SandboxedPeriods } from './sandboxed-periods.js';
import { ownFilesByName, provenanceOf, writableRootsFor } from '../decide/index.js';
import { Policy, type NetworkAmendment } from '../rules/index.js';
import { DaemonNetworkDecider } from './network-decider.js';

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
  /** answers the runs' supervisors may reuse (src/daemon/reuse-grants.ts); none: every exec is asked */
  reuse?: ReuseGrants;
  /** append a network_rule to the default rules file (a network prompt's saved answer); resolves with the line */
  amendNetwork?(rule: NetworkAmendment): Promise<string>;
  /** the proxies of runs whose network is "rules" (src/network/proxies.ts); none: such runs have no network */
  network?: { open(runId: string): Promise<boolean>; close(runId: string): Promise<void> };
  /** per-run client folders (src/daemon/client-folders.ts); none: every client replies in the shared one */
  folders?: ClientFolders;
  /** what knowing a program by its bytes reads besides its file (ProgramIdentity.state); none: the answers
   * handed over up front are decided afresh each time (src/daemon/reuse-presets.ts, PresetMemo) */
  knownProgramsState?(): string;
}

const GRANT_TTL_MS = 30_000;

/** A run record names its script; a long one is cut (each subcommand's own record has its words). */
function clip(script: string): string {
  return script.length > 4096 ? `${script.slice(0, 4096)}… (${script.length} characters)` : script;
}

export class Daemon<P> {
  config: GateConfig;
  readonly broker: ApprovalBroker;
  readonly cache = new SessionCache();
  readonly runs = new RunTable();
  readonly startedAt = new Date();
  private decider: Decider;
  private deciderPolicy: P;
  /** reused_told: execs answered from a reused Run that their supervisor told of (it writes the others' records itself);
   * reused_refused: such notices naming no grant this daemon gave for that run and program (not recorded) */
  readonly counters = { preflight: 0, exec: 0, prompts: 0, denied: 0, paired: 0, reused_told: 0, reused_refused: 0 };
  /** execs the LD_PRELOAD layer was told to run, awaiting the kernel layer's report of them */
  private readonly pairs = new ExecPairs();
  private readonly settlements = new Settlements();
  private readonly repliesJson = new WeakMap<ScriptResult, string>();
  private lastRequestAt = 0;
  /** warm-up scripts decided so far, of how many (ping's info shows it) */
  private readonly warmUpState = { done: 0, of: 0 };
  /** escalation tokens: 192 random bits, as escalation.ts's newEscalationToken, from a pool */
  private readonly tokens = new RandomIds(24);
  /** protected paths missing when a sandboxed run started, moved aside if it made them (planted.ts) */
  private readonly plants = new PlantWatch();
  /** when the first sandboxed run of this daemon that can write started: what changed before, none wrote */
  private sandboxedSince?: Date;
  /** when sandboxed runs of earlier daemons could write, and this one's, kept in GATE_HOME (git-trust.ts) */
  private readonly periods: SandboxedPeriods;
  /** one decision per new host:port a run's sandbox connects to: what the network proxy asks */
  readonly networkDecider: DaemonNetworkDecider;
  /** the client folder each stream request came from, once worked out (null: none) */
  private readonly streamFolders = new WeakMap<HandlerContext, string | null>();
  /** hosts' own sandboxes for their calls (approval channel `sandbox-narrow`, one per connection, withdrawn
   * when it closes): what `gate status` shows; the calls themselves carry theirs (hostSandbox) */
  private readonly hostSandboxes = new Map<string, SandboxNarrowing>();
  /** each run's sandbox: the session's narrowed by its call's `--sandbox` (run-sandbox.ts) */
  private readonly runSandboxes = new RunSandboxes();
  /** any-argv answers decided lately for presets (src/daemon/reuse-presets.ts) */
  private readonly presetMemo = new PresetMemo();
  /** how exec'ing processes were started, read from /proc with its kept descriptors and readings
   * (src/daemon/provenance.ts) */
  private readonly ancestries = new AncestryReader();

  constructor(private readonly deps: DaemonDeps<P>) {
    this.config = deps.config;
    this.periods = new SandboxedPeriods(join(deps.paths.home, SANDBOXED_PERIODS_FILE), deps.log);
    this.broker = new ApprovalBroker(() => this.config.approval_timeout_ms, (a) => this.mayAsk(a));
    this.deciderPolicy = deps.policy.current;
    this.decider = deps.deciderFor(this.deciderPolicy);
    this.networkDecider = new DaemonNetworkDecider({
      rules: () => {
        const p = this.deps.policy.current;
        return p instanceof Policy ? p.networkRuleList() : [];
      },
      broken: () => this.brokenRules(),
      approvalPolicy: () => this.config.approval_policy,
      lists: () => this.config.network_domains,
      approvalTimeoutMs: () => this.config.approval_timeout_ms,
      runs: this.runs,
      broker: this.broker,
      audit: deps.audit,
      amend: deps.amendNetwork,
      log: deps.log,
    });
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
          this.ownFolder(msg, ctx);
          return await this.exec(msg, ctx);
        case 'exec-reused':
          // only a supervisor outside the sandbox tells of a reused exec, on its own socket (notice()): one
          // on the request channel, which gated runs reach, would be an audit record a run wrote of itself.
          // Not recorded, not answered (a notice has no reply), said in the daemon's log now and then.
          this.refuseReused(`exec-reused notice ${msg.id} refused: it came on the request channel, not the supervisors' notice socket`);
          return NO_REPLY;
        case 'run-finished':
          this.ownFolder(msg, ctx);
          return this.runFinished(msg);
        case 'start-up-end':
          this.ownFolder(msg, ctx);
          return this.startUpEnd(msg);
        case 'session-sandbox': {
          const req = validateSessionSandbox(msg);
          // a key and a network choice: never what the holder runs (src/daemon/session-sandbox.ts)
          const join = (await this.deps.sessions?.join(req.key, req.own_network)) ?? null;
          return { v: PROTOCOL_VERSION, id: msg.id, type: 'session-sandbox', join } satisfies SessionSandboxReply;
        }
        case 'session-sandbox-stale': {
          const req = validateSessionSandboxStale(msg);
          this.deps.sessions?.stale(req.pid, req.mntns);
          return NO_REPLY;
        }
      }
      throw new ProtocolError(
        'unknown-type',
        `unknown message type '${msg.type}' (expected ping, preflight, exec, exec-reused, start-up-end, run-finished, session-sandbox or session-sandbox-stale)`,
        msg.id,
      );
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
   * A request naming a run is taken only from that run's client folder, or from the clients' folder itself,
   * where no sandbox can bind: a datagram by where its reply socket is bound, a stream request by
   * what the process that connected sees there (peer-folder.ts, the kernel's word). A run's sandbox (or guard)
   * sees and writes its own folder alone, so a request from another run's sandbox (or from a socket bound
   * anywhere else) naming this run is refused; the folder its pre-flight was asked from (a gate-sh started
   * inside a run) may name it too. A run the daemon does not know has nothing to take.
   * Throws a ProtocolError (`refused`).
   */
  private ownFolder(msg: Envelope, ctx: HandlerContext, runId = msg.run_id): void {
    if (!this.deps.folders || typeof runId !== 'string') return;
    const run = this.runs.peek(runId);
    if (!run) return;
    const from = this.requestFolder(ctx);
    if (from === '' || (from !== undefined && (from === run.folder || from === run.askedFrom))) return;
    const who = ctx.transport === 'dgram' ? ctx.peer : `pid ${ctx.peerPid ?? '?'} (stream.sock)`;
    throw new ProtocolError('refused', `a request for run ${runId} came from ${who}, outside that run's client folder`, msg.id);
  }

  /** The client folder a request came from ('' the clients' folder itself, a run id, or undefined: none),
   * worked out once per request (a stream request's costs a few looks in /proc). */
  private requestFolder(ctx: HandlerContext): string | undefined {
    if (ctx.transport === 'dgram') return ctx.peer === undefined ? undefined : replyFolder(this.deps.paths, ctx.peer);
    if (ctx.peerPid === undefined) return undefined;
    const known = this.streamFolders.get(ctx);
    if (known !== undefined) return known ?? undefined;
    const f = peerFolder(this.deps.paths, ctx.peerPid);
    this.streamFolders.set(ctx, f ?? null);
    return f;
  }

  /** The client folder of a new run: a nested shell's run lives in its enclosing run's sandbox, so it
   * replies in that run's folder (the enclosing run's record, or, once that is gone, the folder it asked
   * from); any other run gets a new folder of its own. */
  private runFolder(id: string, run: RunRecord, parentRun: string | undefined, ctx: HandlerContext): void {
    const folders = this.deps.folders;
    if (!folders) return;
    const from = this.requestFolder(ctx);
    if (from) run.askedFrom = from;
    if (parentRun !== undefined) {
      run.folder = this.runs.peek(parentRun)?.folder || from || undefined;
      if (run.folder) return;
    }
    try {
      folders.make(run.run_id);
      run.folder = run.run_id;
    } catch (e) {
      throw new ProtocolError('refused', `cannot make the run's client folder: ${(e as Error).message}; check 'gate status'`, id);
    }
  }

  /** The client folder of a run (its own or its enclosing run's), while the daemon has it. */
  clientFolderOf(runId: string): string | undefined {
    const f = this.runs.peek(runId)?.folder;
    return f ? this.deps.folders?.of(f) : undefined;
  }

  /** Whether a run's client folder is still needed: a run using it has not ended. */
  folderInUse(folder: string): boolean {
    const r = this.runs.peek(folder);
    return r !== undefined && r.finished === undefined;
  }

  /** Warm the parsers with throw-away scripts while no client asks (src/daemon/warm-up.ts). */
  warmUp(o: WarmUpOptions = {}): void {
    warmUp(o, {
      decide: (req) => this.currentDecider().preflight(req, this.decideContext(this.config.sandbox_policy)),
      lastRequestAt: () => this.lastRequestAt,
      log: (l) => this.deps.log(l),
      state: this.warmUpState,
    });
  }

  info(): Record<string, unknown> {
    return {
      pid: process.pid,
      session: this.deps.paths.session,
      protocol: PROTOCOL_VERSION,
      started_at: this.startedAt.toISOString(),
      decider: this.decider.name,
      warm_up: { ...this.warmUpState },
    };
  }

  private currentDecider(): Decider {
    const p = this.deps.policy.current;
    if (p !== this.deciderPolicy) {
      this.deciderPolicy = p;
      this.decider = this.deps.deciderFor(p);
    }
    return this.decider;
  }

  private decideContext(sandbox: SandboxPolicy): SessionPolicies {
    return { approvalPolicy: this.config.approval_policy, sandboxPolicy: sandbox, gitReadOnly: this.config.git_read_only };
  }

  /** The sandbox a run runs under: the session's, narrowed by its call's `--sandbox` (run-sandbox.ts). */
  sandboxOf(run: RunRecord | undefined): SandboxPolicy {
    return this.runSandboxes.of(this.config.sandbox_policy, run?.atMost);
  }

  private async preflight(msg: Envelope, ctx: HandlerContext): Promise<PreflightReply | EncodedReply> {
    const req = validatePreflight(msg);
    this.counters.preflight++;
    const refused = this.refusal(req);
    if (refused) {
      this.deps.audit.write({ kind: 'run', cwd: req.cwd, argv: [req.shell, req.flag, clip(req.script)], detail: `refused: ${refused}` });
      throw new ProtocolError('refused', refused, req.id);
    }
    // what the Node client derives from its arguments, for the native gate-sh (src/exec/client-plan.ts)
    if (req.plan) nativeRequest(req as PreflightRequest & { plan: PlanRequest });
    // a nested shell names its enclosing run, an interactive line its session's run, from that run's client folder only
    if (req.parent_run) this.ownFolder(msg, ctx, req.parent_run);
    if (req.session_run) this.ownFolder(msg, ctx, req.session_run);
    // a finished run passes on nothing (runs.ts, live)
    const parent = req.parent_run ? this.runs.live(req.parent_run) : undefined;
    // the call's own sandbox, never wider than the session's nor than its enclosing run's
    let atMost: SandboxPolicy | undefined;
    try {
      atMost = runAtMost(req.sandbox_at_most, parent?.atMost);
    } catch (e) {
      if (!(e instanceof SandboxPolicyError)) throw e;
      throw new ProtocolError('malformed', `preflight request ${req.id}: "sandbox_at_most": ${e.message}`, req.id);
    }
    const sandbox = this.runSandboxes.of(this.config.sandbox_policy, atMost);
    const check = this.currentDecider().preflight(req, this.decideContext(sandbox));
    this.noteWritable(req.cwd, req.start_up?.tmpdir);
    const run = this.runs.create({
      cwd: req.cwd,
      pid: req.pid,
      root_pid: parent?.root_pid ?? req.pid,
      sandbox_permissions: req.sandbox_permissions,
      additional_permissions: req.additional_permissions,
      command: [req.shell, req.flag, clip(req.script)],
    });
    if (atMost) run.atMost = atMost;
    this.runFolder(req.id, run, req.parent_run, ctx);
    // an interactive session's next line: the session bash's execs (under session_run) reuse this line's answers
    const session = req.session_run ? this.runs.live(req.session_run) : undefined;
    if (session) session.current = run.run_id;
    // a sourced file's functions, an eval's: they stay in the shell for its later commands and nested shells
    if (check.foreignText || parent?.foreignText || session?.foreignText) run.foreignText = true;
    if (check.foreignText && session) session.foreignText = true;
    // A forbidden subcommand anywhere: nothing runs, so nobody is asked anything.
    const anyForbidden = check.subcommands.some((s) => s.requirement === 'forbidden');
    // A nested `bash -c '<script>'` whose enclosing run settled exactly this script (the person saw it
    // whole, as one command) is not asked again: one decision per command.
    const covered = parent ? settledScript(parent, scriptKey(req.script, req.cwd)) : undefined;
    // a nested shell's script that the enclosing run did not spell out (a sourced file's or a program's own file's
    // `bash -c`, `bash -c "$(cat f)"`): judged here, but whoever wrote it, nothing of it leaves the sandbox by a
    // rule, neither at its execs (foreignText) nor by what this pre-flight settles (foreignScript, execCtx)
    if (parent && covered === undefined) run.foreignText = run.foreignScript = true;
    const inherited: DecisionSource | undefined =
      covered === undefined || !parent ? undefined : { kind: 'parent-run', run_id: parent.run_id, ...(covered ? { approval_id: covered } : {}) };
    const quick = check.subcommands.map((s) => this.decideWithoutAsking(s, anyForbidden, inherited));
    const nobodyAsked = quick.every((q) => q !== undefined);
    // the policy's own Actions stand (the common case): what they decide is the same for every such run
    const policyOwn = nobodyAsked && quick.every((q, i) => q!.action === check.subcommands[i].action && !q!.extraSource);
    if (policyOwn) run.shared = this.settlements.sharedSettlement(check, req.cwd);
    // ask: false (an agent's hook): what needs a person is answered, not asked; the hook's agent asks its user
    const unasked = (s: SubcommandResult): Decided => ({ action: deny(s.reason ?? `approval needed for '${shortCommand(s.argv)}'`) });
    const subReplies = nobodyAsked
      ? check.subcommands.map((s, i) => this.record(s, quick[i]!, policyOwn ? undefined : run, 'preflight', req.cwd, run.run_id)) // no promises
      : req.ask === false
        ? check.subcommands.map((s, i) => this.record(s, quick[i] ?? unasked(s), run, 'preflight', req.cwd, run.run_id))
        : await this.decideAll(check, run, req, ctx, anyForbidden, inherited);
    const reply: PreflightReply = {
      v: PROTOCOL_VERSION,
      id: req.id,
      type: 'preflight',
      run_id: run.run_id,
      action: overall(subReplies.filter((v, i) => v.action.type === 'Deny' || !check.subcommands[i].literal).map((v) => v.action)),
      complex: check.complex,
      subcommands: subReplies,
      sandbox,
    };
    // the user's change to the hidden credential locations, for every sandbox the client builds (secrets.ts)
    if (this.config.secrets) reply.secrets = this.config.secrets;
    if (check.perExecSandbox && reply.action.type !== 'Deny') {
      // decided per exec: the script cannot write unless a person agreed to the writes it asked up front
      // (the sandbox is the decision's own, as `gate explain` shows it)
      reply.per_exec = true;
      reply.sandbox = check.perExecSandbox;
      if (check.sandboxNarrowed) {
        // a write this stricter sandbox refuses is offered as the rerun even when the script exits 0
        reply.sandbox_narrowed = true;
        run.sandboxNarrowed = true;
      }
    }
    if (req.start_up && reply.action.type !== 'Deny' && this.grantStartUp(req, check, run)) {
      reply.start_up = true;
      // A script whose every command an allow rule lets out runs in the turn sandbox instead, with those
      // commands escalated at their execs (as settled): the start-up files then run sandboxed in place,
      // not each sent out and back in. Only a plain script: what a complex one does in bash itself (a
      // redirection, a builtin) has no exec to escalate, so an approved escalation of it keeps bash outside.
      // A Permissions run keeps its profile; its start-up execs go into the turn sandbox one by one.
      if (!check.complex && reply.action.type === 'Escalate' && reply.action.execution.type === 'Unsandboxed' && isRestricted(sandbox))
        reply.action = RUN;
      const a = reply.action;
      run.startUp = { sandboxed: a.type === 'Run' || (a.type === 'Escalate' && a.execution.type === 'TurnDefault') };
    }
    const argvs = check.subcommands.map((s) => s.argv);
    const kept = reply.action.type === 'Escalate' ? this.gitMustStay(argvs, req.cwd, sandbox, reply.action, run.run_id) : null;
    if (kept !== null) reply.action = RUN;
    const writes = reply.sandbox.type === 'workspace-write' || reply.sandbox.type === 'external-sandbox';
    if (writes && (reply.action.type === 'Run' || (reply.action.type === 'Escalate' && reply.action.execution.type === 'TurnDefault'))) {
      this.sandboxedSince ??= new Date();
      // where this run could write, written down for later daemons (git-trust.ts): its roots, every folder runs
      // of this session worked in, the daemon's $TMPDIR
      const tmp = process.env.TMPDIR?.startsWith('/') ? [process.env.TMPDIR] : [];
      this.periods.sandboxedRun(writableRootsFor(sandbox, req.cwd, [...this.workedIn, ...tmp]).map(realFolder));
      this.plants.start(run.run_id, req.cwd, reply.sandbox, process.env);
    }
    // network "rules": the run's proxy listens before its sandbox is built (the sandbox binds its folder)
    if (this.deps.network && networkRules(reply.sandbox) && reply.action.type !== 'Deny') await this.deps.network.open(run.run_id);
    if (req.plan) {
      reply.plan = clientPlan(req as PreflightRequest & { plan: PlanRequest }, reply, this.deps.paths.requestSock);
      if (kept !== null && reply.plan.program !== undefined) reply.plan.notice = kept;
      // a turn-sandbox attempt (the one offered the rerun) joins its session sandbox, as the Node client's does
      if (this.deps.sessions && reply.plan.rerun) reply.plan = await joinWirePlan(reply.plan, req.plan.env, this.deps.sessions);
      // the programs the script names that were lately given a Run for any argv, decided for this run now: its
      // supervisor answers their first execs itself (the launcher's first option)
      const presets = reply.plan.program?.endsWith('/gate-launch') ? this.planPresets(req, run, check, reply) : undefined;
      if (presets !== undefined && reply.plan.args) reply.plan.args = ['--presets', presets, ...reply.plan.args];
    }
    // The policy's own Actions for a cached script encode to the same reply text every time: once.
    if (!policyOwn) return reply;
    let json = this.repliesJson.get(check);
    if (json === undefined) this.repliesJson.set(check, (json = JSON.stringify(subReplies)));
    return new EncodedReply(encodePreflightReply(reply, json));
  }

  /**
   * Why nothing of this call may run, before anything is decided: the caller named settings that are not
   * the daemon's (a gate-sh's environment; the native one's is in its plan request). Refused, never run
   * under other settings than the caller asked for (a setting asked for is applied or the call refused, never ignored).
   */
  private refusal(req: PreflightRequest): string | undefined {
    const asked = req.plan ? callerSettings(envRecord(req.plan.env)) : req.settings;
    return (asked ? settingsConflict(this.config, asked, this.deps.paths.session) : undefined) ?? this.brokenRules();
  }

  /** Fail closed on a broken rules file at any time, not only at start: a rule the file adds (a `forbidden`
   * one) cannot be known to be out of force, so nothing runs until the file is fixed (README "How a script
   * is decided"). The watcher reloads it by itself; then runs go on. */
  private brokenRules(): string | undefined {
    const e = this.deps.policy.lastError;
    return e
      ? `a rules or config file is broken: ${e.message}; nothing runs until it is fixed (gate-sh reloads it by itself on the next save; 'gate status' shows the error)`
      : undefined;
  }

  /** Decide every subcommand of a script, asking the questions it raises all at once. */
  private async decideAll(
    check: ScriptResult,
    run: RunRecord,
    req: PreflightRequest,
    ctx: HandlerContext,
    anyForbidden: boolean,
    inherited?: DecisionSource,
  ): Promise<SubcommandReply[]> {
    const asked: string[] = [];
    const subReplies = await Promise.all(
      check.subcommands.map((s) =>
        this.decide(
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
          ctx.gone,
        ).then((v) => {
          // One denial decides the script: withdraw the questions still open.
          if (v.action.type === 'Deny' && asked.length) this.broker.cancel(asked, 'another subcommand of the script was denied');
          return v;
        }),
      ),
    );
    ctx.setPending(null);
    return subReplies;
  }

  private async exec(msg: Envelope, ctx: HandlerContext): Promise<ExecReply> {
    const req = validateExec(msg);
    const kernel = req.layer === 'kernel';
    // one decision per exec: the kernel layer's report of an exec the LD_PRELOAD layer was just told to run
    if (
      kernel &&
      req.pair_run !== undefined &&
      this.pairs.size > 0 &&
      !nameless(req.program) &&
      this.pairBound(req) &&
      this.pairs.take(pairKey(req.pair_run, req), Date.now())
    ) {
      this.counters.paired++;
      return { v: PROTOCOL_VERSION, id: req.id, type: 'exec', action: { type: 'Run' } };
    }
    this.counters.exec++;
    const run = this.execRun(req);
    const runId = run?.run_id ?? req.run_id;
    const broken = this.brokenRules();
    if (broken) {
      this.counters.denied++;
      this.deps.audit.write({ kind: 'exec', run_id: runId, cwd: req.cwd, argv: req.argv, detail: `denied: ${broken}` });
      return this.execReply(req, deny(broken), ctx, runId);
    }
    if (run?.startUp) {
      // (a later run's plan may bring its answer: decided then as any exec, planPresets)
      if (kernel) this.deps.reuse?.startUpRan(req.program);
      // never settled into the run: the script's own `id -u` is not covered by the profile's
      const s = this.currentDecider().startUp(req, run.startUp.sandboxed);
      return this.execReply(req, this.record(s, { action: s.action }, undefined, 'exec', req.cwd, runId).action, ctx, runId);
    }
    // how the exec'ing process and its ancestors were started: read once, when something needs it
    let read: { a: ReturnType<AncestryReader['read']> } | undefined;
    // (the LD_PRELOAD layer may ask from the new program itself: not its own ancestor)
    const ancestry = () => (read ??= { a: this.ancestries.read(req.host_pid, run?.root_pid, kernel ? undefined : { argv: req.argv }) }).a;
    // The exec-time checks always run (forbidden rules, code-loading variables, writable programs, skills);
    // the decider reuses what pre-flight settled for this argv + cwd only where they add nothing.
    const execCtx: ExecContext = {
      ...this.execContext(req, run),
      settled: settledHere(run, settledFor(this.runs, run, settleKey(req.argv, req.cwd))),
      ancestry,
      scoped: kernel,
    };
    const check = this.currentDecider().exec(req, execCtx);
    const v = await this.decide(check, run, 'exec', req.cwd, false, (id) => ctx.setPending([id]), runId, undefined, undefined, ctx.gone);
    ctx.setPending(null);
    // (an escalation out of the sandbox, however it came, of a command the decision read as the model's own
    // from the pid its request named: redeemed only by such a process; a person approving a prompt saw only
    // the command, not who asked)
    const reply = this.execReply(req, v.action, ctx, runId, check.widened === true);
    // the new program's descendants can never leave the sandbox by a rule: the supervisor leaves the
    // LD_PRELOAD layer out of them (docs/exec-gate.md, "Below a program running its own files")
    if (kernel && v.action.type === 'Run' && req.host_pid !== undefined && execBelowProgram(req, check, ancestry)) reply.below_program = true;
    // the decision's own answer, nothing added by a session approval or an enclosing run (a reuse is the
    // supervisor's, for its own run: an exec decided under a nested run's permissions is not reused)
    const reusable = check.reusable || check.reuseScope !== undefined;
    if (reusable && this.deps.reuse && v.action === check.action && v.source === check.source && !req.encoding && runId === req.run_id) {
      const g = { run_id: req.run_id, program: req.program, source: check.matched_rule ?? '', decision: check.decision };
      // the supervisor writes each reused exec's record itself, before the new program runs
      reply.reuse = { ...this.deps.reuse.grant(g), audit: this.deps.audit.forWriter(reusedHead(g.run_id), reusedTail(g.source, g.decision)) };
      // (below the program running its own files that made this exec only: src/decide/reuse.ts)
      if (!check.reusable && check.reuseScope) reply.reuse.scope = check.reuseScope;
      // (a program below which every exec is a program's, wherever it is exec'd: src/decide/provenance.ts)
      else if (ownFilesByName(req.program, req.real_program ?? req.program)) reply.reuse.below_program = true;
      // other programs' answers for this run up front, each decided here as its exec would be
      // (src/daemon/reuse-presets.ts): no provenance (never lifted), no pre-flight settlement
      const offer = check.reusable && kernel && req.host_pid !== undefined ? this.deps.reuse.offer(req.run_id, req.program) : [];
      const scope = !check.reusable && kernel && req.host_pid !== undefined ? check.reuseScope : undefined;
      // (a scoped grant: the other programs given one lately, decided as this process's exec of each would
      // be, below the same program running the same image; each holds only there, as this grant does; and
      // with a run's first one, a build's, the any-argv ones too, with their own audit fields)
      const image = scope ? this.scopeImage(ancestry(), scope) : undefined;
      const offered = scope && image !== undefined ? this.deps.reuse.offerScoped(req.run_id, req.program, image) : { scoped: [], anyArgv: [] };
      const anyArgv = scope ? offered.anyArgv : offer;
      if (anyArgv.length > 0 || offered.scoped.length > 0) {
        const decider = this.currentDecider();
        const grant = (x: Granted) => this.deps.reuse!.grant(x).grant;
        const holdsScoped = (program: string, realProgram: string | undefined, programFile: string) => {
          const one = presetRequest(req, program, realProgram, programFile);
          const c = decider.exec(one, { ...execCtx, settled: settledFor(this.runs, run, settleKey(one.argv, req.cwd)) });
          // (below a program, `rm` alone is the sandbox heuristic's Run and `rm -f x` the program heuristic's,
          // one lifting what the other never saw: the same Run in place, recorded as this grant's)
          const source = (c.matched_rule ?? '') === g.source || [c.matched_rule, g.source].every((m) => m === 'heuristic:program' || m === 'heuristic:sandbox');
          return !c.reusable && sameScope(c.reuseScope, scope!) && source && c.decision === g.decision && sameAction(c.action, check.action);
        };
        const scoped = scope ? presetsFor(offered.scoped, req.host_pid!, holdsScoped, (program) => grant({ ...g, program }), scope) : [];
        if (scoped.length > 0) reply.reuse.scoped_presets = scoped;
        // every any-argv preset's record reads as this grant's, or (with a scoped grant) as the first one held
        const room = anyArgv.slice(0, Math.max(0, MAX_PRESETS - scoped.length));
        const any = this.anyArgvPresets(req, run, execCtx, room, req.host_pid!, scope ? undefined : { source: g.source, decision: g.decision });
        if (any.presets.length > 0 && scope) reply.reuse.any_argv = { tail: reusedTail(any.as!.source, any.as!.decision), presets: any.presets };
        else if (any.presets.length > 0) reply.reuse.presets = any.presets;
      }
    }
    return reply;
  }

  /** What an exec's decision reads of its run and of the daemon's settings (each exec adds its settlement and
   * ancestry). */
  private execContext(req: ExecRequest, run: RunRecord | undefined): ExecContext {
    return {
      approvalPolicy: this.config.approval_policy,
      sandboxPolicy: this.sandboxOf(run),
      gitReadOnly: this.config.git_read_only,
      sandboxPermissions: run?.sandbox_permissions ?? 'use_default',
      additionalPermissions: run?.additional_permissions,
      foreignText: run?.foreignText === true,
      writable: this.writableBesidesPolicy(req, run),
    };
  }

  /**
   * The presets a run gets with its plan (docs/exec-gate.md, "Answers handed over with the plan"): the
   * programs lately given a Run for any argv that the script names as commands, and those start-up phases ran
   * lately (`id` of /etc/profile: a sandboxed start-up runs them in place too), each decided for this run as
   * its exec by its own name would be, their files read through the daemon's own root (the run has no
   * process yet; the supervisor holds a preset only for an exec of that very file, as it reads it), encoded as
   * the reply the launcher's `--presets` takes. Only for a run whose every exec is decided in place: its bash
   * runs as Run, not decided per exec, and its start-up phase, if any, sandboxed (its execs are Run in place
   * then, as the preset answers them). undefined: none.
   */
  private planPresets(req: PreflightRequest, run: RunRecord, check: ScriptResult, reply: PreflightReply): string | undefined {
    const reuse = this.deps.reuse;
    if (!reuse || reply.action.type !== 'Run' || reply.per_exec || (run.startUp && !run.startUp.sandboxed)) return undefined;
    const names = new Set(check.subcommands.map((s) => (s.argv[0] ?? '').slice((s.argv[0] ?? '').lastIndexOf('/') + 1)));
    const programs = reuse.named(names, run.startUp !== undefined).slice(0, MAX_PRESETS);
    if (programs.length === 0) return undefined;
    // (the code-loading variables the run's execs inherit, as the supervisor would name them)
    const env = Object.fromEntries(Object.entries(envRecord(req.plan?.env ?? [])).filter(([k]) => isCodeLoadingName(k) && k !== 'LD_PRELOAD'));
    const base: ExecRequest = { v: PROTOCOL_VERSION, id: req.id, type: 'exec', run_id: run.run_id, program: '/', argv: [], cwd: req.cwd, pid: req.pid, env, layer: 'kernel' };
    const { presets, as } = this.anyArgvPresets(base, run, { ...this.execContext(base, run), scoped: false }, programs, undefined);
    if (presets.length === 0 || !as) return undefined;
    const audit = this.deps.audit.forWriter(reusedHead(run.run_id), reusedTail(as.source, as.decision));
    const granted = { grant: presets[0].grant, epoch: reuse.epoch, audit, presets };
    const handed: ExecReply = { v: PROTOCOL_VERSION, id: req.id, type: 'exec', action: RUN, reuse: granted };
    return JSON.stringify(handed);
  }

  /**
   * The any-argv presets among `programs` for a run (src/daemon/reuse-presets.ts): each decided as `base`'s
   * exec of that program by its own name would be (no ancestry, not scoped, no provenance), its file read
   * through hostPid's root (undefined: the daemon's own, at pre-flight, before the run has a process), with the
   * source and decision their records share: `as`, or (none given) the first held one's.
   */
  private anyArgvPresets(
    base: ExecRequest,
    run: RunRecord | undefined,
    execCtx: ExecContext,
    programs: readonly string[],
    hostPid: number | undefined,
    as?: { source: string; decision: string },
  ): { presets: ReusePreset[]; as?: { source: string; decision: string } } {
    if (programs.length === 0 || !this.deps.reuse) return { presets: [] };
    const reuse = this.deps.reuse;
    const decider = this.currentDecider();
    // (answers remembered by everything such a decision reads: src/daemon/reuse-presets.ts, PresetMemo; the
    // state is one stat per named program)
    const state = this.deps.knownProgramsState?.();
    if (state !== undefined) this.presetMemo.use(decider, state);
    const context = state !== undefined ? this.presetMemo.context(base, execCtx) : undefined;
    let shared = as;
    const holdsAny = (program: string, realProgram: string | undefined, programFile: string, file: string): boolean | 'known' => {
      const one = presetRequest(base, program, realProgram, programFile);
      const settled = settledFor(this.runs, run, settleKey(one.argv, base.cwd));
      const key = context !== undefined ? PresetMemo.key(context, program, realProgram, file, settled) : undefined;
      let a = this.presetMemo.get(key);
      let known = a !== undefined;
      if (!a) {
        const c = decider.exec(one, { ...execCtx, settled, ancestry: undefined, scoped: false });
        a = { reusable: c.reusable === true, source: c.matched_rule ?? '', decision: c.decision };
        if (key !== undefined && !(known = this.presetMemo.set(key, a, programFile, file))) return false;
      }
      if (!a.reusable) return false;
      shared ??= { source: a.source, decision: a.decision };
      return a.source === shared.source && a.decision === shared.decision && (known ? 'known' : true);
    };
    const presets = presetsFor(programs, hostPid, holdsAny, (program) => reuse.grant({ run_id: base.run_id, ...shared!, program }).grant);
    return { presets, as: shared };
  }

  /** The process a scoped grant holds below, with the image it runs, as the exec's ancestry read it (a
   * process that execs starts a scope of its own: the supervisor drops what it kept below it); undefined
   * when the ancestry does not hold it. */
  private scopeImage(ancestry: Ancestry | null, scope: ReuseScope): string | undefined {
    const a = ancestry?.chain.find((x) => sameScope(x.id, scope));
    return a ? [scope.pid, scope.start, scope.ppid, a.exe, ...a.argv].join('\0') : undefined;
  }

  /**
   * The run an exec is decided under: the request's. A kernel-layer report names the supervisor's run and
   * the run the exec'ing process carries (pair_run: a nested shell's, an interactive line's); that run's
   * settlements, start-up phase and permissions apply, as they did when the LD_PRELOAD layer asked first,
   * but only a run of the supervisor's own sandbox and tree (pairBound): the process chose the name.
   */
  private execRun(req: ExecRequest): RunRecord | undefined {
    // a finished run's settlements, start-up phase and permissions end with it: an exec naming it is
    // decided as one of no run (its id is in the audit log; whoever names it gets nothing of it)
    const run = this.runs.live(req.run_id);
    if (req.layer !== 'kernel' || req.pair_run === undefined || req.pair_run === req.run_id || !run) return run;
    return (this.pairBound(req) && this.runs.live(req.pair_run)) || run;
  }

  /**
   * Whether a kernel-layer report's pair_run may speak for the exec: it names the supervisor's own run, or a
   * run of the same sandbox (or guard) and the same outermost gate-sh, one whose client folder is the
   * supervisor's run's (a nested gate-sh's run replies in its enclosing run's folder). The supervisor's run
   * is the kernel's word (ownFolder checked where the report came from); pair_run is the exec'ing process's
   * GATE_RUN, its own choice: naming a run of another sandbox (its id is in the audit log) gets nothing of
   * that run, neither the answers kept for its execs (exec-pairs.ts) nor its settlements (nothing from
   * inside widens the gate).
   */
  private pairBound(req: ExecRequest): boolean {
    if (req.pair_run === undefined) return false;
    if (req.pair_run === req.run_id) return true;
    const run = this.runs.peek(req.run_id);
    const own = this.runs.peek(req.pair_run);
    return run !== undefined && own !== undefined && own.root_pid === run.root_pid && own.folder === run.folder;
  }

  /** A notice on the supervisors' socket (src/daemon/notice-channel.ts), which no sandbox reaches: an
   * ExecReused; anything else is refused. */
  notice(msg: Envelope): void {
    if (msg.type !== 'exec-reused') throw new ProtocolError('unknown-type', `'${msg.type}' is not a notice`, msg.id);
    this.execReused(msg);
    this.deps.audit.flush();
  }

  /** Folders a run could have written besides its policy's roots: the working folders of its run
   * and of the run the supervisor asks for (a nested run's, the outermost's), the daemon's $TMPDIR and
   * runtime folder (src/decide/exec-writable.ts). */
  private writableBesidesPolicy(req: ExecRequest, run: RunRecord | undefined): string[] {
    const cwds = [run?.cwd, this.runs.get(req.run_id)?.cwd].filter((c): c is string => c !== undefined);
    const tmpdir = process.env.TMPDIR?.startsWith('/') ? [process.env.TMPDIR] : [];
    return [...new Set([...cwds, ...this.workedIn, ...tmpdir, this.deps.paths.runtime])];
  }

  /** Every run's working folder (and $TMPDIR, when a client said) this session has seen: any sandboxed run
   * could have written there, and a later run's escalation must not execute what it wrote. A
   * request can only add folders (stricter); bounded, the oldest forgotten first. */
  private readonly workedIn = new Set<string>();
  private noteWritable(...dirs: (string | undefined)[]): void {
    for (const d of dirs) {
      if (!d?.startsWith('/') || this.workedIn.has(d)) continue;
      if (this.workedIn.size >= 256) this.workedIn.delete(this.workedIn.values().next().value!);
      this.workedIn.add(d);
    }
  }

  /** A run's supervisor answered an exec with a reused Run (ExecReply.reuse) and could not write its audit
   * record itself: the record. */
  private execReused(msg: Envelope): void {
    const req = validateExecReused(msg);
    const g = this.deps.reuse?.granted(req.grant, req.run_id, req.program);
    if (!g) {
      // no record of an exec nobody can vouch for (a grant is 192 random bits the daemon sent only to the
      // run that asked)
      this.refuseReused(`exec-reused notice for ${req.run_id} refused: its grant is not one this daemon gave for ${req.program}`);
      return;
    }
    this.counters.reused_told++;
    const around = `"cwd":${JSON.stringify(req.cwd)},"argv":${JSON.stringify([req.program, ...req.argv.slice(1)])}`;
    this.deps.audit.writeEncoded(`${reusedHead(req.run_id)},${around},${reusedTail(g.source, g.decision)}`);
  }

  /** A refused exec-reused notice: counted, and said in the daemon's log the first time and every 1,000th
   * after (a flood of them must not flood the log). */
  private refuseReused(why: string): void {
    if (this.counters.reused_refused++ % 1000 === 0) this.deps.log(`${why} (${this.counters.reused_refused} so far)`);
  }

  /**
   * An escalation out of the sandbox that runs git, where the configuration git would read could have been
   * written by a sandboxed run: it runs in the turn sandbox instead (git-trust.ts). The reason (logged, in the
   * audit log, and the notice a pre-flight's plan carries for gate-sh to print), or null when it may leave.
   */
  private gitMustStay(
    commands: readonly (readonly string[])[],
    cwd: string,
    policy: SandboxPolicy,
    execution: Action,
    runId: string,
    env?: Readonly<Record<string, string>>,
  ): string | null {
    // before this daemon's first sandboxed run nothing changed by one of its own; earlier daemons' still count
    const since = this.sandboxedSince ?? (this.periods.earlier().length > 0 ? new Date(8.64e15) : undefined);
    if (!since || !isRestricted(policy) || (execution.type === 'Escalate' && execution.execution.type === 'TurnDefault')) return null;
    for (const argv of commands) {
      const p = argv[0];
      if (p === undefined || (p !== 'git' && !p.endsWith('/git'))) continue;
      const why = gitEscalationRefusal({
        cwd,
        writable: writableRootsFor(policy, cwd),
        since,
        home: process.env.HOME,
        xdgConfigHome: process.env.XDG_CONFIG_HOME,
        argv,
        env,
        earlier: this.periods.earlier(),
      });
      if (why === null) continue;
      const detail = `escalation kept in the sandbox: ${why}`;
      this.deps.log(`${runId}: ${detail}`);
      this.deps.audit.write({ kind: 'run', run_id: runId, cwd, argv: [...argv], detail });
      return `${detail} (it runs there)`;
    }
    return null;
  }

  private execReply(req: ExecRequest, action: Action, ctx: HandlerContext, runId = req.run_id, byAncestry = false): ExecReply {
    const argv = [req.program, ...req.argv.slice(1)];
    if (action.type === 'Escalate' && this.gitMustStay([argv], req.cwd, this.sandboxOf(this.runs.get(runId)), action, runId, req.env) !== null) action = RUN;
    const reply: ExecReply = { v: PROTOCOL_VERSION, id: req.id, type: 'exec', action };
    const kernel = req.layer === 'kernel';
    // an Escalate pairs like a Run: the kernel layer lets it go on in place, the LD_PRELOAD layer escalates.
    // Only a request that came over stream.sock: a datagram came through the run's supervisor, which has
    // paired it itself (shims/launch/pairing.c), so remembering it here would cost every exec for nothing.
    if (!kernel && ctx.transport === 'stream' && (action.type === 'Run' || action.type === 'Escalate') && !nameless(req.program))
      this.pairs.add(pairKey(req.run_id, req), Date.now());
    // the kernel layer cannot hand over descriptors: it lets an Escalate run in place (inside the sandbox),
    // and its supervisor hands the token to the new program's LD_PRELOAD layer, which escalates with it
    // (one decision, not a second one from that program's constructor; shims/launch/pairing.c, "landed")
    if (action.type === 'Escalate') {
      const token = this.tokens.next();
      this.deps.escalation.grant({
        token,
        run_id: runId,
        program: req.program,
        argv: req.argv,
        cwd: req.cwd,
        execution: action.execution,
        env: req.env,
        expires_at: Date.now() + GRANT_TTL_MS,
        ...(byAncestry && action.execution.type !== 'TurnDefault' ? { byAncestry: true as const } : {}),
      });
      reply.escalation_token = token;
    }
    return reply;
  }

  /** A start-up phase for this run, when the client outside the sandbox asked with the key and nothing the
   * agent could have written takes part in start-up (src/daemon/start-up.ts). */
  private grantStartUp(req: PreflightRequest, check: ScriptResult, run: RunRecord): boolean {
    const key = this.deps.startUpKey;
    if (!key || !req.start_up || !keyMatches(key, req.start_up.key) || !check.parses) return false;
    const refused = startUpRefusal({ req: req.start_up, policy: this.sandboxOf(run), cwd: req.cwd, since: this.startedAt });
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
    // its escalations not yet redeemed end with it, and so do its network grants ("this command only") and proxy
    this.deps.escalation.endRun?.(req.run_id);
    this.networkDecider.endRun(req.run_id);
    void this.deps.network?.close(req.run_id);
    for (const m of this.plants.finish(req.run_id)) {
      this.deps.log(`run ${req.run_id} made protected path ${m.from}: moved aside to ${m.to}`);
      this.deps.audit.write({ kind: 'run', run_id: req.run_id, cwd: run?.cwd, detail: `made protected path ${m.from}: moved aside to ${m.to}` });
    }
    this.deps.audit.write({
      kind: 'run',
      run_id: req.run_id,
      cwd: run?.cwd,
      argv: run?.command,
      exit_status: req.exit_status,
      duration_ms: req.duration_ms,
      ...(run ? {} : { detail: 'unknown run' }),
    });
    if (req.stderr_tail === undefined) return { v: PROTOCOL_VERSION, id: req.id, type: 'ack' };
    // the native gate-sh asks whether its failed sandboxed attempt was a sandbox denial (the on-failure rerun)
    const denial = sandboxDenial(req.exit_status, req.stderr_tail, run?.sandboxNarrowed === true);
    return {
      v: PROTOCOL_VERSION,
      id: req.id,
      type: 'ack',
      info: denial ? { why: denialReason(denial), justification: rerunJustification(denialReason(denial)) } : {},
    };
  }

  /**
   * The answer that needs nobody asked: forbidden, no approval needed, not asked because another subcommand
   * is forbidden, approved earlier this session, or covered by the enclosing run. Undefined: ask a human.
   */
  private decideWithoutAsking(s: SubcommandResult, skipPrompt: boolean, inherited?: DecisionSource): Decided | undefined {
    if (s.requirement === 'forbidden' || s.requirement === 'skip') return { action: s.action };
    if (skipPrompt) return { action: deny('not asked: another subcommand of the script is forbidden') };
    const cached = this.cache.has(s.cache_key);
    if (cached) return { action: s.action, extraSource: { kind: 'session', approval_id: cached } };
    if (inherited) return { action: s.action, extraSource: inherited };
    return undefined;
  }

  /** From a check to an Action: cache, prompt, amendment; records the run's settled decision and audits. */
  private async decide(
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
    /** aborted when the requester is gone: its prompt is withdrawn at once, not left to time out */
    gone?: AbortSignal,
  ): Promise<SubcommandReply> {
    const quick = this.decideWithoutAsking(s, skipPrompt, inherited);
    if (quick) return this.record(s, quick, run, origin, cwd, runId);
    this.counters.prompts++;
    const cmd = shortCommand(s.argv); // only a prompt shows it (shell-quoting costs on the hot path)
    const prompt = promptFor({ s, run, runId, origin, cwd, display: displayCommand(s.argv), justification });
    // a permission request naming a hidden credential location says so (src/daemon/secret-prompt.ts)
    // (the profile the approval grants: a with_additional_permissions request's, or a skill's declared one)
    const profile = s.action.type === 'Escalate' && s.action.execution.type === 'Permissions' ? s.action.execution.profile : run?.additional_permissions;
    const secrets = secretAccessFor(profile, { env: process.env, setting: this.config.secrets });
    if (secrets) prompt.secret_access = secrets;
    const approvalId = randomUUID();
    onAsk(approvalId);
    const risk = await riskFor(prompt, approvalId, {
      assessor: this.config.risk_assessor,
      seen: (p) => this.broker.hasApproverFor(p),
      log: (l) => this.deps.log(l),
    });
    const ask = this.broker.ask(risk ? { ...prompt, risk_assessment: risk } : prompt, approvalId);
    const withdraw = (): void => this.broker.cancel([approvalId], 'withdrawn: the requester is gone (it ended before an answer)');
    if (gone?.aborted) withdraw();
    else gone?.addEventListener('abort', withdraw, { once: true });
    const outcome = await ask.done;
    gone?.removeEventListener('abort', withdraw);
    const action = await applyAnswer(s, outcome, cmd, {
      cache: this.cache,
      amend: (p) => this.deps.amend(p),
      log: (l) => this.deps.log(l),
      approvalTimeoutMs: () => this.config.approval_timeout_ms,
    });
    return this.record(
      s,
      {
        action,
        outcome,
        extraSource: { kind: 'approval', approval_id: outcome.approval_id, answer: reviewDecisionKind(outcome.decision), approver: outcome.approver },
      },
      run,
      origin,
      cwd,
      runId,
    );
  }

  /** A decided subcommand: remembered in its run (for the exec gate and nested shells), audited, answered. */
  private record(s: SubcommandResult, decided: Decided, run: RunRecord | undefined, origin: 'preflight' | 'exec', cwd: string, runId: string): SubcommandReply {
    const { action, outcome, extraSource } = decided;
    if (action.type === 'Deny') this.counters.denied++;
    else if (run && !(s.unsettled && !outcome))
      this.settlements.settleInto(
        (run.own ??= newSettlement()),
        s,
        action,
        outcome?.approval_id ?? (extraSource?.kind === 'session' ? extraSource.approval_id : ''),
        cwd,
      );
    // A pre-flight check comes from the decider's cache, and when the policy's own Action stands (the common
    // case) its audit fields are the same every time: encoded once. Exec-gate checks are new each time.
    const reused = origin === 'preflight' && action === s.action && !outcome && !extraSource;
    const fields = reused ? (this.settlements.keysOf(s, cwd).audit ??= auditFields(s, decided, cwd)) : auditFields(s, decided, cwd);
    this.deps.audit.writeEncoded(`"kind":"${origin === 'preflight' ? 'decision' : 'exec'}","run_id":${JSON.stringify(runId)},${fields}`);
    const subReply: SubcommandReply = { argv: s.argv, decision: s.decision, action, source: extraSource ? [...s.source, extraSource] : s.source };
    if (outcome) subReply.approval_id = outcome.approval_id;
    return subReply;
  }

  /** `reject.mcp_elicitations`: MCP elicitation approvers are never asked; the other approvers still are. */
  private mayAsk(a: Approver): boolean {
    const p = this.config.approval_policy;
    return !(a.kind === 'mcp-elicitation' && typeof p === 'object' && p.reject.mcp_elicitations);
  }

  /** Run-time configuration change from the approval channel. */
  setConfig(key: string, value: string, by: string): GateConfig {
    this.config = setConfigValue(this.config, key, value, `config set by ${by}`);
    this.deps.audit.write({ kind: 'config', approver: by, detail: `${key} = ${value}` });
    this.deps.log(`config: ${key} = ${value} (by ${by})`);
    return this.config;
  }

  /**
   * A host's own sandbox for its calls (Codex's sandbox state, through `gate mcp`; null withdraws it): each of
   * its calls asks for it (`gate-sh --sandbox`) and runs in the stricter of it and the session's
   * (run-sandbox.ts); other clients of this daemon keep the session's. Recorded here for `gate status` and
   * the audit log (so `codex exec --sandbox read-only` writes nothing through gate mcp).
   */
  hostSandbox(id: string, n: Omit<SandboxNarrowing, 'since'> | null): { own: SandboxPolicy; effective: SandboxPolicy } {
    const own = this.config.sandbox_policy;
    const before = this.hostSandboxes.get(id);
    if (n) this.hostSandboxes.set(id, { ...n, since: new Date().toISOString() });
    else if (!this.hostSandboxes.delete(id)) return { own, effective: own };
    const effective = n ? stricterSandbox(own, n.policy) : own;
    if (!before || !n || !samePolicy(before.policy, n.policy)) {
      const what = n ? `${n.by}${n.why ? ` (${n.why})` : ''}: its calls run in ${JSON.stringify(effective)}` : `${before?.by ?? 'a host'}: withdrawn`;
      this.deps.audit.write({ kind: 'config', approver: n?.by ?? before?.by ?? 'daemon', detail: `host sandbox ${what}` });
      this.deps.log(`host sandbox ${what}`);
    }
    return { own, effective };
  }

  /** The request server's table sizes (main.ts sets it once the server runs): shown by `gate status`. */
  transportTables?: () => Record<string, number>;

  status(): Record<string, unknown> {
    const d = this.deps;
    return statusView({
      tables: {
        ...this.transportTables?.(),
        runs: this.runs.size,
        finished_runs: this.runs.finishedCount,
        client_folders: d.folders?.size ?? 0,
      },
      info: this.info(),
      paths: d.paths,
      auditPath: d.audit.path,
      policy: d.policy,
      config: this.config,
      broker: this.broker,
      runs: this.runs.size,
      sessionApprovals: this.cache.size,
      counters: this.counters,
      sessions: d.sessions,
      narrowed: this.hostSandboxes.size ? { own: this.config.sandbox_policy, by: [...this.hostSandboxes.values()] } : undefined,
    });
  }

  /** The pids whose descendants are a live run's processes (its outermost gate-sh), for the escalation
   * runner's check of who redeems a run's grant; undefined when the run has ended or is unknown. */
  runRoots(runId: string): readonly number[] | undefined {
    const r = this.runs.live(runId);
    return r ? [r.root_pid] : undefined;
  }

  /** Whether process `pid` (the kernel's word: the escalation runner's SO_PEERCRED) is one whose ancestry up to
   * the grant's run's gate-sh carries only the model's text, as the decision that made the grant read it from the
   * pid its request named: that pid is the request's word, the caller's is the kernel's. The caller is the
   * exec'ing process (not exec'd yet), the new program (its own constructor: not its own ancestor) or a
   * spawn's child (a copy of the process that asked). */
  callerWidens(g: EscalationGrant, pid: number): boolean {
    const run = this.runs.live(g.run_id);
    if (!run) return false;
    return provenanceOf(this.ancestries.read(pid, run.root_pid, { argv: g.argv, exe: g.program }), [g.program, ...g.argv]).widen;
  }

  /** What runs in the session sandboxes (approval channel `jobs`). */
  sessionJobs(): SessionJob[] {
    return this.deps.sessions?.jobs() ?? [];
  }

  /** Approval channel `jobs-kill`: a process of a session sandbox (host pid), or all of them. */
  killJobs(target: number | 'all'): number {
    const n = this.deps.sessions?.kill(target) ?? 0;
    this.deps.audit.write({
      kind: 'job',
      detail: `killed on request: ${target === 'all' ? 'all jobs' : `pid ${target}`} (${n} process${n === 1 ? '' : 'es'})`,
    });
    return n;
  }

  stop(): void {
    this.deps.requestStop();
  }

  /** What a stop would end now (runs, background jobs), said for a person; undefined when nothing. */
  activeWork(): string | undefined {
    const runs = this.runs.active();
    const jobs = this.sessionJobs().filter((j) => j.outlived_command).length;
    const parts: string[] = [];
    if (runs.length)
      parts.push(
        `${runs.length} run${runs.length === 1 ? ' is' : 's are'} active (${runs
          .slice(0, 5)
          .map((r) => `gate-sh pid ${r.root_pid}: ${(r.command ?? []).slice(2).join(' ').slice(0, 60)}`)
          .join('; ')}${runs.length > 5 ? '; ...' : ''})`,
      );
    if (jobs) parts.push(`${jobs} background job${jobs === 1 ? '' : 's'} (gate jobs)`);
    return parts.length ? parts.join(' and ') : undefined;
  }

  /** A forced stop: the runs it ends find why in the session folder (STOP_NOTE_FILE), and say it. */
  noteForcedStop(line: string): void {
    try {
      const tmp = `${this.deps.paths.sessionDir}/${STOP_NOTE_FILE}.${process.pid}`;
      writeFileSync(tmp, `${line}\n`, { mode: 0o600 });
      renameSync(tmp, `${this.deps.paths.sessionDir}/${STOP_NOTE_FILE}`);
    } catch (e) {
      this.deps.log(`cannot write the stop note: ${(e as Error).message}`);
    }
    this.deps.audit.write({ kind: 'daemon', detail: line });
  }

  /** Approval channel `reload`: the rule files (and config.toml's check) now; the error text when broken. */
  reloadPolicy(by: string): string | undefined {
    this.deps.log(`reload requested by ${by}`);
    return this.deps.policy.reload();
  }

  policyFiles(): readonly string[] {
    return this.deps.policy.files;
  }
}

/** A program without a name of its own (a memfd, a deleted file): the LD_PRELOAD layer's answer for it was
 * given without its contents, so the kernel layer's report of it is always decided (it names the file). */
function nameless(program: string): boolean {
  return program.startsWith('/memfd:') || program.endsWith(' (deleted)');
}

/** The exec of `program` by its own name that a preset stands for: `base` with that program, its name as argv,
 * and the file the daemon reads for it. */
function presetRequest(base: ExecRequest, program: string, realProgram: string | undefined, programFile: string): ExecRequest {
  const argv = [program.slice(program.lastIndexOf('/') + 1)];
  const { kernel_argv: _k, real_program: _r, ...same } = base;
  return { ...same, program, argv, program_file: programFile, ...(realProgram ? { real_program: realProgram } : {}) };
}

/** What a run's settlement may still decide at an exec: in a nested run whose script nobody spelled out
 * (RunRecord.foreignScript) nothing settled takes the command out of the sandbox; the exec is decided afresh. */
function settledHere(run: RunRecord | undefined, settled: Action | undefined): Action | undefined {
  const leaves = settled?.type === 'Escalate' && settled.execution.type !== 'TurnDefault';
  return run?.foreignScript && leaves ? undefined : settled;
}

/** The same process, as two readings of it name it. */
function sameScope(a: ReuseScope | undefined, b: ReuseScope): boolean {
  return a !== undefined && a.pid === b.pid && a.start === b.start && a.ppid === b.ppid;
}

/** The same action (a Run in place, as a scoped grant's is: src/decide/reuse.ts). */
function sameAction(a: SubcommandResult['action'], b: SubcommandResult['action']): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
