/**
 * Reading the files a script sources (`source /path`, `. /path`) at pre-flight, for the analysis to decide
 * on what they run (Claude Code sources its shell snapshot before every command). Not pure: it reads the file
 * system, as the caller's user (the daemon is the same user, outside any sandbox).
 *
 * Trust boundary and TOCTOU: bash reads the file again when the script runs, so a file changed after
 * pre-flight runs what pre-flight never saw. That is no wider than any complex script: pre-flight only
 * spares a prompt here; it never lets anything run that the run's own gates would stop. Every program the
 * file execs still meets the exec gate (forbidden is denied there, with the rule's justification), and every
 * write it makes meets the sandbox. Each read is remembered with the file's identity (device, inode, size,
 * mtime), so a cached assessment is used again only while the file is the one that was read.
 *
 * The request channel is reachable from inside sandboxes, and a pre-flight reply lists the literal commands
 * found, so the reader must not read what a sandbox may not: files under the folders hidden from every
 * sandbox (the runtime folder, with the approval folder and its keys) are refused, decided by where the
 * opened file really is (its /proc/self/fd link), so no symlink planted in /tmp reaches them.
 */
import { closeSync, fstatSync, openSync, readlinkSync, readSync, realpathSync, statSync, constants, type BigIntStats } from 'node:fs';
import { DEFAULT_MAX_BYTES } from './analyze.js';

/** What identifies the content that was read: a change of any of these means the file may differ. */
export interface SourcedFile {
  path: string;
  /** `dev:ino:size:mtimeNs:ctimeNs`, or '' when the file could not be read (it must still be unreadable). */
  identity: string;
}

/** A reader for the analysis, and the files it read (for the assessment cache). */
export interface SourceReader {
  read(path: string): string | null;
  readonly files: SourcedFile[];
}

function identityOf(st: BigIntStats): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

export interface SourceReaderOptions {
  /** Folders no sandbox sees: a file inside them is never read (the daemon's runtime folder). */
  hidden: readonly string[];
  /** Larger files are not read (default: the analysis' own cap). */
  maxBytes?: number;
}

/**
 * Reads regular files up to `maxBytes`, not following a FIFO or a device (a read must never block the
 * daemon). Anything else is null: the `source` stays opaque, as before.
 */
export function sourceReader(o: SourceReaderOptions): SourceReader {
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const hidden = o.hidden.map((h) => canonical(h).replace(/\/+$/, ''));
  const files: SourcedFile[] = [];
  return {
    files,
    read(path: string): string | null {
      let fd = -1;
      try {
        fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
        const st = fstatSync(fd, { bigint: true });
        if (!st.isFile() || st.size > BigInt(maxBytes)) return record(files, path, '');
        const real = readlinkSync(`/proc/self/fd/${fd}`);
        if (hidden.some((h) => real === h || real.startsWith(`${h}/`))) return record(files, path, '');
        const buf = Buffer.alloc(Number(st.size));
        let got = 0;
        while (got < buf.length) {
          const n = readSync(fd, buf, got, buf.length - got, got);
          if (n === 0) break;
          got += n;
        }
        // grown or shrunk while being read: not the file that was decided on
        if (got !== buf.length) return record(files, path, '');
        files.push({ path, identity: identityOf(st) });
        return buf.toString('utf8');
      } catch {
        return record(files, path, '');
      } finally {
        if (fd >= 0) closeSync(fd);
      }
    },
  };
}

/** The path with symlinks resolved (the runtime folder may sit under a symlinked /tmp), or as given. */
function canonical(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function record(files: SourcedFile[], path: string, identity: string): null {
  files.push({ path, identity });
  return null;
}

/** Is every file still the one that was read (or still unreadable)? */
export function sameSourcedFiles(files: readonly SourcedFile[]): boolean {
  for (const f of files) {
    let now = '';
    try {
      const st = statSync(f.path, { bigint: true });
      now = st.isFile() ? identityOf(st) : '';
    } catch {
      now = '';
    }
    if (now !== f.identity) return false;
  }
  return true;
}
