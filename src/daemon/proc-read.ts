/**
 * Reads a process's small /proc files (its stat, its cmdline, a task's children) as readFileSync(path,
 * 'utf8') would, only cheaper. Not pure: reads /proc as the daemon, and keeps descriptors open.
 *
 * `ProcFiles` keeps the descriptors of the stat and cmdline files of the processes it read lately, and reads
 * them again from offset 0 with pread: the text is made by the kernel at each read, from the process as it is
 * then (its image after an exec in place, a command line it rewrote), as a read by path would give it. An
 * open /proc/<pid> file is bound to that process, not to its number: once the process is gone a read fails
 * (ESRCH), even when another process has taken the number; then, and for a pid not kept, the file is opened
 * by path again, exactly as the uncached read does. So a kept descriptor saves the open and close (the path
 * walk through /proc), never changes what is read. Bounded (the oldest closed first); on EMFILE/ENFILE
 * every kept descriptor is closed and the open tried once more, so keeping them never costs the daemon one
 * it needs.
 *
 * No trust boundary of its own: what the files say is what the process says of itself, its callers' to
 * judge (src/daemon/provenance.ts, src/decide/provenance.ts).
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** grown when a file does not fit (a long command line), never shrunk: the daemon reads one file at a time */
let buf = Buffer.allocUnsafe(16 * 1024);

/** All of an open file from offset 0, as UTF-8 (invalid bytes as U+FFFD, as readFileSync decodes them). */
function readAll(fd: number): string {
  let got = 0;
  for (;;) {
    if (got === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, got);
      buf = bigger;
    }
    const n = readSync(fd, buf, got, buf.length - got, got);
    if (n === 0) break;
    got += n;
  }
  return buf.toString('utf8', 0, got);
}

/** A file read by path (open, read to its end, close); throws as openSync/readSync do. */
export function readProcText(path: string): string {
  const fd = openSync(path, 'r');
  try {
    return readAll(fd);
  } finally {
    closeSync(fd);
  }
}

type Kept = 'stat' | 'cmdline';

export class ProcFiles {
  /** pid → its files' descriptors, oldest first */
  private readonly kept = new Map<number, Partial<Record<Kept, number>>>();
  constructor(private readonly maxPids = 32) {}

  /** /proc/<pid>/<file> as text; throws when it cannot be read (the process is gone, not readable). */
  read(pid: number, file: Kept): string {
    const k = this.kept.get(pid);
    const fd = k?.[file];
    if (fd !== undefined) {
      try {
        const text = readAll(fd);
        // (the latest read kept longest)
        this.kept.delete(pid);
        this.kept.set(pid, k!);
        return text;
      } catch {
        // gone (its number may be another process's now): read by path, as if never kept
        this.forget(pid);
      }
    }
    const path = `/proc/${pid}/${file}`;
    let opened: number;
    try {
      opened = openSync(path, 'r');
    } catch (e) {
      if (!['EMFILE', 'ENFILE'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
      this.clear();
      opened = openSync(path, 'r');
    }
    let text: string;
    try {
      text = readAll(opened);
    } catch (e) {
      closeSync(opened);
      throw e;
    }
    this.keep(pid, file, opened);
    return text;
  }

  /** Close every kept descriptor. */
  clear(): void {
    for (const pid of [...this.kept.keys()]) this.forget(pid);
  }

  private keep(pid: number, file: Kept, fd: number): void {
    let k = this.kept.get(pid);
    if (k === undefined) {
      if (this.kept.size >= this.maxPids) this.forget(this.kept.keys().next().value as number);
      this.kept.set(pid, (k = {}));
    }
    const old = k[file];
    if (old !== undefined) closeSync(old);
    k[file] = fd;
  }

  private forget(pid: number): void {
    const k = this.kept.get(pid);
    if (k === undefined) return;
    this.kept.delete(pid);
    for (const fd of Object.values(k)) if (fd !== undefined) closeSync(fd);
  }
}
