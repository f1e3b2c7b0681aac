/**
 * Answers the runs' supervisors may give again themselves (src/decide/reuse.ts says which), and
 * the policy epoch that bounds them. A grant names one program of one run; the supervisor tells the daemon
 * of every exec it answers with it (ExecReused), and the daemon audits that exec as it would have audited
 * its own answer. The epoch file (POLICY_EPOCH_FILE in the request folder, a little-endian 64-bit count)
 * is raised before any decision under a new policy and when a daemon starts, so no reused answer outlives
 * the rules it was decided by. Not pure: owns that file.
 * Trust boundary: a notice comes on the supervisors' notice socket (src/daemon/notice-channel.ts), which
 * no sandbox reaches; still, only a grant the daemon handed out (192 random bits, sent only to the reply
 * socket of the run that asked) names a decision, and a notice naming anything else is not recorded.
 */
import { closeSync, constants, openSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { POLICY_EPOCH_FILE } from '../protocol/index.js';
import { RandomIds } from './random-ids.js';

/** Grants kept at most (the oldest go first: a supervisor's notice naming a forgotten grant is refused,
 * and the daemon's log says so). */
const MAX_GRANTS = 4096;
/** Programs remembered for handing over up front (src/daemon/reuse-presets.ts), and runs told of them. */
const MAX_LEARNED = 64;
const MAX_RUNS = 1024;
/** Programs remembered for handing over with a scoped grant (rm, sh, bash below make or configure) and the
 * scopes (with the image each ran) they were handed over for, per run. */
const MAX_LEARNED_SCOPED = 16;
/** Programs remembered from runs' start-up phases (`id` of /etc/profile): a few. */
const MAX_LEARNED_START_UP = 8;
const MAX_SCOPES = 4096;

export interface Granted {
  run_id: string;
  program: string;
  /** the audit record's source and decision of the answer reused */
  source: string;
  decision: string;
}

export class ReuseGrants {
  private readonly fd: number;
  private epochValue: number;
  private readonly buf = Buffer.alloc(8);
  private readonly ids = new RandomIds(24);
  private readonly byKey = new Map<string, string>();
  private readonly grants = new Map<string, Granted>();
  /** programs given an any-argv grant lately, the latest last */
  private readonly learned = new Set<string>();
  /** per run: any-argv grants given so far (2 and more: its presets were handed over) */
  private readonly runs = new Map<string, number>();
  /** programs given a scoped grant lately, the latest last */
  private readonly learnedScoped = new Set<string>();
  /** run and scope (its process and the image it ran) the scoped programs were handed over for */
  private readonly scopesOffered = new Set<string>();
  /** programs a run's start-up phase ran lately, the latest last */
  private readonly learnedStartUp = new Set<string>();

  constructor(requestDir: string) {
    // created when missing, never truncated: a new daemon raises the count its predecessor left
    this.fd = openSync(join(requestDir, POLICY_EPOCH_FILE), constants.O_RDWR | constants.O_CREAT, 0o644);
    const n = readSync(this.fd, this.buf, 0, 8, 0);
    this.epochValue = n === 8 ? Number(this.buf.readBigUInt64LE(0)) : 0;
    this.bump();
  }

  get epoch(): number {
    return this.epochValue;
  }

  /** Every answer given so far stops being reused (the policy changed). */
  bump(): void {
    this.epochValue++;
    this.buf.writeBigUInt64LE(BigInt(this.epochValue), 0);
    writeSync(this.fd, this.buf, 0, 8, 0);
  }

  /** The grant for this run's program (one per pair, made on first use). */
  grant(g: Granted): { grant: string; epoch: number } {
    const key = `${g.run_id}\0${g.program}`;
    let id = this.byKey.get(key);
    if (id === undefined) {
      id = this.ids.next();
      this.byKey.set(key, id);
      this.grants.set(id, g);
      if (this.grants.size > MAX_GRANTS) {
        const [old, was] = this.grants.entries().next().value!;
        this.grants.delete(old);
        this.byKey.delete(`${was.run_id}\0${was.program}`);
      }
    }
    return { grant: id, epoch: this.epochValue };
  }

  /**
   * A run got an any-argv grant for program (src/decide/reuse.ts, reusableForAnyArgv): remembered; the
   * programs to decide for that run up front now (src/daemon/reuse-presets.ts): those remembered, the first
   * time the run gets its second such grant (a run that asks once, `ls`, pays nothing), else none (and none
   * once offerScoped handed them over).
   */
  offer(runId: string, program: string): string[] {
    learn(this.learned, program, MAX_LEARNED);
    const n = (this.runs.get(runId) ?? 0) + 1;
    this.runs.set(runId, n);
    if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
    return n === 2 ? [...this.learned].reverse().filter((p) => p !== program) : [];
  }

  /**
   * A run got a grant for program scoped to one process (src/decide/reuse.ts, reusableInScope), `scope`
   * naming that process and the image it runs: remembered; the programs to decide for that scope up front
   * now (the others given a scoped grant lately), the first time the run gets a grant for that scope; and with
   * the run's first scoped grant (a program running its own files: a build, which will ask for more), the
   * any-argv programs, when they were not handed over yet (as `offer` gives them).
   */
  offerScoped(runId: string, program: string, scope: string): { scoped: string[]; anyArgv: string[] } {
    learn(this.learnedScoped, program, MAX_LEARNED_SCOPED);
    const key = `${runId}\0${scope}`;
    const scoped = this.scopesOffered.has(key) ? [] : [...this.learnedScoped].reverse().filter((p) => p !== program);
    learn(this.scopesOffered, key, MAX_SCOPES);
    // (counted as handed over, when there are any: `offer` gives them no more)
    if ((this.runs.get(runId) ?? 0) >= 2 || this.learned.size === 0) return { scoped, anyArgv: [] };
    this.runs.set(runId, 2);
    if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
    return { scoped, anyArgv: [...this.learned].reverse() };
  }

  /** A run's start-up phase ran program (decided as start-up, never granted): remembered for `named`. */
  startUpRan(program: string): void {
    learn(this.learnedStartUp, program, MAX_LEARNED_START_UP);
  }

  /** A pre-flight's candidates for presets: the programs given an any-argv grant lately whose file names are
   * among `names` (the commands its script names), then, for a run with a start-up phase, those start-up
   * phases ran lately, the latest first of each. Counts nothing: the run's second grant still brings the
   * others (`offer`). */
  named(names: ReadonlySet<string>, startUp: boolean): string[] {
    const byName = [...this.learned].reverse().filter((p) => names.has(p.slice(p.lastIndexOf('/') + 1)));
    return startUp ? [...new Set([...byName, ...[...this.learnedStartUp].reverse()])] : byName;
  }

  /** The answer a notice says it reused, when it is one this daemon granted for that run and program. */
  granted(grant: string, runId: string, program: string): Granted | undefined {
    const g = this.grants.get(grant);
    return g && g.run_id === runId && g.program === program ? g : undefined;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** Adds v as the latest of set, forgetting the oldest past max. */
function learn(set: Set<string>, v: string, max: number): void {
  set.delete(v);
  set.add(v);
  if (set.size > max) set.delete(set.values().next().value!);
}
