/**
 * Programs known by what they are (docs/exec-gate.md): a copy, hard link, rename, memfd or deleted file
 * holding the same bytes as an executable that a `prompt` or `forbidden` rule names is judged as that
 * program; so is one holding the dynamic loader or a multi-call binary (`./ld /bin/rm f` runs rm as the
 * loader does: judged as the program it runs, src/script/in-process.ts). The named executables are the
 * rules' first words found on the system PATH (or the path a rule names); a file is compared with them
 * only when its size equals one of theirs, and then by SHA-256 of its contents, cached by device, inode,
 * size and mtime.
 *
 * I/O edge of the daemon (stat and read of program files). Trust: the file is the one the exec named — for
 * the kernel layer a /proc/<pid>/fd or /proc/<pid>/root path the supervisor gives, so the bytes are those the
 * kernel is about to run (up to a rewrite between the check and the exec: docs/exec-gate.md).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { isLoader, MULTI_CALL } from '../script/in-process.js';
import { basename, join } from 'node:path';
import { kernelCommand, SCRIPT_HEAD_BYTES, type KernelCommand } from '../decide/shebang.js';

/** Where a rule's bare program name is looked up (a trusted, fixed list: not the caller's PATH). */
export const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
/** Files larger than this are never hashed (a named program this large is compared by name only). */
const MAX_HASHED = 256 * 1024 * 1024;

interface Named {
  name: string;
  size: number;
  file: string;
}

function statOrNull(p: string): Stats | null {
  try {
    return statSync(p);
  } catch {
    return null;
  }
}

/** Where the dynamic loaders live (ld-linux-x86-64.so.2, ld-linux-aarch64.so.1, ld-musl-*.so.1). */
const LOADER_DIRS = ['/lib64', '/lib', '/usr/lib64', '/usr/lib'];

/** Programs that run another program in their own process, known by their bytes too: the loaders found on
 * this system (by path) and the multi-call binaries (by name, on the system PATH). */
export function inProcessRunners(): string[] {
  const loaders: string[] = [];
  for (const d of LOADER_DIRS) {
    let names: string[] = [];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const n of names) if (isLoader(n)) loaders.push(join(d, n));
  }
  return [...loaders, ...MULTI_CALL];
}

export class ProgramIdentity {
  private readonly hashes = new Map<string, string>();
  private named: Named[] = [];
  private sizes = new Set<number>();
  private namesKey = '';

  /** The executables the given rule names (first words of prompt/forbidden rules) resolve to. */
  setNames(names: readonly string[]): void {
    const key = names.join('\0');
    if (key === this.namesKey) return;
    this.namesKey = key;
    const named: Named[] = [];
    for (const name of names) {
      const candidates = name.includes('/') ? [name] : SYSTEM_PATH.map((d) => join(d, name));
      const seen = new Set<string>();
      for (const c of candidates) {
        const st = statOrNull(c);
        if (!st?.isFile() || st.size === 0 || st.size > MAX_HASHED) continue;
        let real = c;
        try {
          real = realpathSync(c);
        } catch {
          // keep c
        }
        if (seen.has(real)) continue;
        seen.add(real);
        named.push({ name: basename(name), size: st.size, file: real });
      }
    }
    this.named = named;
    this.sizes = new Set(named.map((n) => n.size));
  }

  /** The rule name whose program has the same bytes as `file`, if any (undefined: not one of them). */
  identify(file: string): string | undefined {
    if (this.named.length === 0) return undefined;
    const st = statOrNull(file);
    if (!st?.isFile() || !this.sizes.has(st.size)) return undefined;
    const h = this.hashOf(file, st);
    if (h === undefined) return undefined;
    for (const n of this.named) {
      if (n.size !== st.size) continue;
      const nst = statOrNull(n.file);
      if (nst && this.hashOf(n.file, nst) === h) return n.name;
    }
    return undefined;
  }

  private hashOf(file: string, st: Stats): string | undefined {
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    let h = this.hashes.get(key);
    if (h !== undefined) return h;
    try {
      h = createHash('sha256').update(readFileSync(file)).digest('hex');
    } catch {
      return undefined;
    }
    if (this.hashes.size >= 4096) this.hashes.delete(this.hashes.keys().next().value!);
    this.hashes.set(key, h);
    return h;
  }
}

/** A file's first bytes (as many as the kernel reads for a `#!` line), or null when it cannot be read. */
export function headOf(file: string): Uint8Array | null {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(SCRIPT_HEAD_BYTES);
    return buf.subarray(0, readSync(fd, buf, 0, buf.length, 0));
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** What the daemon opens for a path as the exec'ing process sees it: through that process's root when the
 * kernel layer named the file that way (`/proc/<pid>/root/...`, `/proc/<pid>/fd/<n>`: a sandbox's own
 * mounts), else the path itself (the LD_PRELOAD layer's request, read as the daemon sees it). */
export function processView(req: { program: string; program_file?: string }): (path: string) => string | undefined {
  const proc = req.program_file?.match(/^\/proc\/\d+\//)?.[0];
  return (path) => {
    if (path === req.program) return req.program_file ?? (path.startsWith('/proc/') ? undefined : path);
    return proc ? `${proc}root${path}` : path;
  };
}

/**
 * The program the kernel runs for this exec when its file is a `#!` script (src/decide/shebang.ts), each
 * level's `#!` line read as the process sees the file, and the final interpreter known by its bytes too (a
 * copy of rm named in a `#!` line is rm). I/O edge: reads the script and its interpreters, outside any
 * sandbox; what the file holds is untrusted text, judged, never run here.
 */
export function kernelCommandOf(
  req: { program: string; program_file?: string; argv: readonly string[]; cwd: string; kernel_argv?: string[] },
  identity: ProgramIdentity,
): KernelCommand | null | 'unreadable' {
  const view = processView(req);
  // the supervisor's reading, made before it asked, is what the exec is checked against after it happened:
  // judged as read there (a script rewritten between two readings cannot split the judgement from the check)
  const told = req.kernel_argv;
  const k: KernelCommand | null | 'unreadable' = told
    ? { program: absoluteIn(req.cwd, told[0]), argv: [...told, ...req.argv.slice(1)], scripts: [req.program] }
    : kernelCommand(req.program, req.argv, req.cwd, (p) => {
        const f = view(p);
        return f === undefined ? null : headOf(f);
      });
  if (k === null || k === 'unreadable') return k;
  const f = view(k.program);
  const name = f === undefined ? undefined : identity.identify(f);
  return name !== undefined && name !== basename(k.program) ? { ...k, knownAs: name } : k;
}

function absoluteIn(cwd: string, path: string): string {
  return path.startsWith('/') ? path : `${cwd.replace(/\/+$/, '')}/${path}`;
}
