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
   * time the run gets its second such grant (a run that asks once, `ls`, pays nothing), else none.
   */
  offer(runId: string, program: string): string[] {
    this.learned.delete(program);
    this.learned.add(program);
    if (this.learned.size > MAX_LEARNED) this.learned.delete(this.learned.values().next().value!);
    const n = (this.runs.get(runId) ?? 0) + 1;
    this.runs.set(runId, n);
    if (this.runs.size > MAX_RUNS) this.runs.delete(this.runs.keys().next().value!);
    return n === 2 ? [...this.learned].reverse().filter((p) => p !== program) : [];
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
