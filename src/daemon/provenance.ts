/**
 * Reads how an exec'ing process and its ancestors were started, from /proc, for the exec gate's reading of
 * where a command came from (src/decide/provenance.ts). Not pure: reads /proc as the daemon's user, in the
 * daemon's pid namespace. The pid comes from the run's supervisor (the kernel's notification, or the
 * relay's SCM_CREDENTIALS) through the request channel, so it is untrusted like every request field: a
 * wrong pid can only make the reading unsure or stricter-than-true for what it names (see the trust note
 * in src/decide/provenance.ts).
 */
import { readdirSync, readlinkSync, realpathSync } from 'node:fs';
import { basename } from 'node:path';
import { belowProgram, ownFilesByName, type Ancestor, type Ancestry, type SubcommandResult } from '../decide/index.js';
import { PROVENANCE_PLUMBING, type ExecRequest, type ReuseScope } from '../protocol/index.js';
import { ProcFiles, readProcText } from './proc-read.js';

/** gate-sh's plumbing, as src/decide/provenance.ts reads it (an unreadable exe: the supervisor) */
const PLUMBING = new Set<string>([...PROVENANCE_PLUMBING, '']);

/** No run nests deeper than this between its gate-sh and an exec (a loop of pids cannot hang the walk). */
const MAX_DEPTH = 64;

/** pid, start time and parent from /proc/<pid>/stat ("pid (comm) state ppid ... starttime": comm may hold
 * spaces and parentheses, so fields are counted after the last ')'); through `kept` descriptors, or by path. */
function identity(pid: number, kept?: ProcFiles): ReuseScope | undefined {
  try {
    const stat = kept ? kept.read(pid, 'stat') : readProcText(`/proc/${pid}/stat`);
    const rest = stat.lastIndexOf(')') + 2;
    const ppid = Number(field(stat, rest, 1));
    const start = Number(field(stat, rest, 19));
    return Number.isInteger(ppid) && Number.isInteger(start) ? { pid, start, ppid } : undefined;
  } catch {
    return undefined;
  }
}

/** The `k`th space-separated word of `s` from `from` on: `s.slice(from).split(' ')[k]`, without making the
 * other fifty (the daemon reads a few stat lines per ask, each time with its caches cold). */
function field(s: string, from: number, k: number): string | undefined {
  let i = from;
  for (let n = 0; n < k; n++) {
    const j = s.indexOf(' ', i);
    if (j < 0) return undefined;
    i = j + 1;
  }
  const j = s.indexOf(' ', i);
  return j < 0 ? s.slice(i) : s.slice(i, j);
}

function exeOf(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
  } catch {
    // not dumpable (the run's supervisor) or gone: decided by the name alone, as plumbing
    return '';
  }
}

/**
 * Children of gate-sh's plumbing read as started by it (not adopted), by their pid and start time and their
 * parent's: a build's every request reads the same run's shell below the same supervisor or bubblewrap init,
 * and each reading scans that parent's children and their identities (1-2 ms). Only that reading is kept:
 * its siblings are the shell's own descendants, started after it, so none can make it adopted later (in a
 * session sandbox, where several runs' commands share bubblewrap's init, the first reading stands, as it did
 * for the request that made it). "Adopted" is not kept: it may come from a /proc read that failed once.
 * Bounded: the oldest forgotten first. The daemon owns one.
 */
export class StartedHere {
  private readonly keys = new Set<string>();
  constructor(private readonly max = 4096) {}
  static key(a: ReuseScope, parent: ReuseScope): string {
    return `${a.pid}/${a.start}/${parent.pid}/${parent.start}`;
  }
  has(k: string): boolean {
    return this.keys.has(k);
  }
  add(k: string): void {
    if (this.keys.size >= this.max) this.keys.delete(this.keys.values().next().value as string);
    this.keys.add(k);
  }
}

/**
 * Whether process `a`, whose parent `parent` is gate-sh's plumbing, was adopted there rather than started by
 * it: another child of that parent that is not plumbing started before it (the run's own command is the first
 * process the plumbing starts; every later one is a descendant of it, re-parented when its own parent exited:
 * bubblewrap's init and the supervisor, a child subreaper, take the run's orphans). Unreadable counts as
 * adopted. Start times are clock ticks: within one tick the lower pid is the earlier.
 */
function adopted(a: Ancestor, parent: number): boolean {
  const me = a.id;
  if (!me) return true;
  let kids: number[];
  try {
    kids = readdirSync(`/proc/${parent}/task`).flatMap((t) =>
      readProcText(`/proc/${parent}/task/${t}/children`).split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return true;
  }
  if (!kids.includes(me.pid)) return true;
  for (const k of kids) {
    if (k === me.pid) continue;
    const o = identity(k);
    if (!o || o.start > me.start || (o.start === me.start && k > me.pid)) continue;
    if (!PLUMBING.has(basename(exeOf(k)))) return true;
  }
  return false;
}

function ancestor(pid: number, files: ProcFiles): Ancestor | null {
  const id = identity(pid, files);
  if (!id) return null;
  let argv: string[];
  try {
    const raw = files.read(pid, 'cmdline');
    argv = raw.split('\0');
    if (argv.length > 0 && argv[argv.length - 1] === '') argv.pop();
  } catch {
    return null;
  }
  return { exe: exeOf(pid), argv, id };
}

/**
 * The daemon's reader of how processes were started: the stat and cmdline descriptors of the processes it read
 * lately, read again in place (src/daemon/proc-read.ts: the same text as a read by path, without its open and
 * close), and the run shells it read as started by gate-sh's plumbing (StartedHere). The daemon owns one; a
 * reader of its own reads the same, with its own descriptors and keepings.
 */
export class AncestryReader {
  constructor(
    readonly started = new StartedHere(),
    private readonly files = new ProcFiles(),
  ) {}

  /**
   * The ancestry of host pid `pid` up to (not including) `rootPid`, the run's outermost gate-sh. `self`: the
   * request was made by the new program itself (its constructor), so that process is not its own ancestor;
   * with `exe`, only when the process runs that very program (its real path).
   */
  read(pid: number | undefined, rootPid: number | undefined, self?: { argv: readonly string[]; exe?: string }): Ancestry | null {
    if (pid === undefined || !Number.isInteger(pid) || pid <= 1) return null;
    const chain: Ancestor[] = [];
    let p: number | undefined = pid;
    for (let i = 0; i < MAX_DEPTH && p !== undefined && p > 1; i++) {
      if (p === rootPid) return { chain: markAdopted(chain, this.started), complete: true };
      const a = ancestor(p, this.files);
      if (!a) return chain.length ? { chain: markAdopted(chain, this.started), complete: false } : null;
      if (!(i === 0 && self && sameArgv(a.argv, self.argv) && (self.exe === undefined || sameFile(a.exe, self.exe)))) chain.push(a);
      p = a.id?.ppid;
    }
    return chain.length ? { chain: markAdopted(chain, this.started), complete: false } : null;
  }
}

/** Each process of the chain whose parent is gate-sh's plumbing: adopted there, or started by it? */
function markAdopted(chain: Ancestor[], started: StartedHere): Ancestor[] {
  for (let j = 0; j + 1 < chain.length; j++) {
    const parent = chain[j + 1];
    if (PLUMBING.has(basename(chain[j].exe)) || !PLUMBING.has(basename(parent.exe)) || !parent.id) continue;
    const me = chain[j].id;
    const key = me ? StartedHere.key(me, parent.id) : undefined;
    if (key && started.has(key)) continue;
    if (adopted(chain[j], parent.id.pid)) chain[j].adopted = true;
    else if (key) started.add(key);
  }
  return chain;
}

function sameFile(exe: string, program: string): boolean {
  try {
    return exe !== '' && realpathSync(program) === exe;
  } catch {
    return false;
  }
}

function sameArgv(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((w, i) => w === b[i]);
}

/**
 * Whether every exec below the new program of a kernel-layer exec the decision lets run (its forked
 * children's and theirs) is below a program running its own files: the exec'ing process is below one
 * already (the Run is scoped to it), the new program is one by its name alone, or the new program as /proc
 * will show it (a `#!` script: its interpreter, with the argv the kernel builds) is one where it runs, read
 * with the exec'ing process's ancestry. The supervisor then marks the new program (src/decide/provenance.ts,
 * belowProgram).
 */
export function execBelowProgram(req: ExecRequest, result: SubcommandResult, ancestry: () => Ancestry | null): boolean {
  if (result.reuseScope) return true;
  const image = result.runs ? { exe: result.runs[0], argv: result.runs } : { exe: req.real_program ?? req.program, argv: req.argv };
  if (!result.runs && ownFilesByName(req.program, image.exe)) return true;
  return belowProgram(ancestry(), image);
}

