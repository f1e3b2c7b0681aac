/**
 * Programs known by what they are (docs/exec-gate.md): a copy, hard link, rename, memfd or deleted file
 * holding the same bytes as an executable that a `prompt` or `forbidden` rule names is decided as that
 * program; so is one holding the dynamic loader or a multi-call binary (`./ld /bin/rm f` runs rm as the
 * loader does: decided as the program it runs, src/script/in-process.ts). The named executables are the
 * rules' first words found on the system PATH (or the path a rule names). An ELF file is compared with them
 * by its GNU build-id, else by the bytes of its executable segments when their layout matches (padding,
 * renaming, stripping, objcopy and a removed build-id leave a program known); any other file by
 * SHA-256 of its contents when its size matches. Fingerprints and hashes are cached by device, inode, size
 * and times. Also the `#!` reading of an exec's file as the process sees it (kernelCommandOf).
 *
 * I/O edge of the daemon (stat and read of program files). Trust: the file is the one the exec named — for
 * the kernel layer a /proc/<pid>/fd or /proc/<pid>/root path the supervisor gives, so the bytes are those the
 * kernel is about to run (up to a rewrite between the check and the exec: docs/exec-gate.md).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { isLoader, MULTI_CALL } from '../script/index.js';
import { basename, join } from 'node:path';
import { kernelCommand, type KernelCommand, SCRIPT_HEAD_BYTES } from '../decide/index.js';

/** Where a rule's bare program name is looked up (a trusted, fixed list: not the caller's PATH). */
export const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];
/** Files larger than this are never hashed (a named program this large is compared by name only). */
const MAX_HASHED = 256 * 1024 * 1024;

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

/** How much of a file is read to know an ELF program by its headers (ELF header, program headers, notes). */
const HEAD_BYTES = 16 * 1024;

/**
 * What a file is, as far as it can be told cheaply and robustly. An ELF program: its GNU build-id (a hash the
 * linker computed over what it linked: survives a copy, padding, a rename, stripping symbols, a rewrite of
 * the section headers) and `load`, the layout of its PT_LOAD segments (addresses, sizes, flags, entry point),
 * whose bytes are hashed only when the layout matches a named program's (the segments are what the kernel
 * maps: bytes appended or sections that are not loaded leave them as they are). Any other file: its size,
 * compared by SHA-256 of its contents when the size matches.
 */
interface Fingerprint {
  buildId?: string;
  load?: string;
  segments?: { offset: number; size: number }[];
  size: number;
}

interface Named {
  name: string;
  file: string;
  print: Fingerprint;
  /** SHA-256 of its loaded segments (ELF) or of the whole file, once asked for */
  hash?: string;
}

/** The ELF fingerprint of a file's first bytes (64-bit, little-endian: the hosts gate-sh runs on); null: not
 * an ELF program read that way. Pure. */
export function elfFingerprint(head: Buffer, size: number): Fingerprint | null {
  if (head.length < 64 || head.readUInt32BE(0) !== 0x7f454c46 || head[4] !== 2 || head[5] !== 1) return null;
  const entry = head.readBigUInt64LE(24);
  const phoff = Number(head.readBigUInt64LE(32));
  const phentsize = head.readUInt16LE(54);
  const phnum = head.readUInt16LE(56);
  if (phentsize < 56 || phoff + phentsize * phnum > head.length) return null;
  const loads: string[] = [`entry=${entry}`];
  const segments: { offset: number; size: number }[] = [];
  let buildId: string | undefined;
  for (let i = 0; i < phnum; i++) {
    const o = phoff + i * phentsize;
    const type = head.readUInt32LE(o);
    const flags = head.readUInt32LE(o + 4);
    const offset = Number(head.readBigUInt64LE(o + 8));
    const vaddr = head.readBigUInt64LE(o + 16);
    const filesz = Number(head.readBigUInt64LE(o + 32));
    const memsz = head.readBigUInt64LE(o + 40);
    // only the executable segments: the headers, notes and data segments change with a rewrite of the file
    // (objcopy, a removed build-id note) while the program's code stays rm's code
    if (type === 1 && (flags & 1) !== 0) {
      loads.push(`${vaddr}:${filesz}:${memsz}:${flags}`);
      segments.push({ offset, size: filesz });
    } else if (type === 4 && buildId === undefined && offset + filesz <= head.length) buildId = noteBuildId(head.subarray(offset, offset + filesz));
  }
  if (segments.length === 0) return null;
  return { ...(buildId ? { buildId } : {}), load: loads.join(' '), segments, size };
}

/** NT_GNU_BUILD_ID in a PT_NOTE segment's bytes, hex. */
function noteBuildId(notes: Buffer): string | undefined {
  for (let o = 0; o + 12 <= notes.length; ) {
    const namesz = notes.readUInt32LE(o);
    const descsz = notes.readUInt32LE(o + 4);
    const type = notes.readUInt32LE(o + 8);
    const name = o + 12;
    const desc = name + ((namesz + 3) & ~3);
    if (desc + descsz > notes.length) return undefined;
    if (type === 3 && notes.toString('latin1', name, name + namesz).replace(/\0+$/, '') === 'GNU' && descsz > 0)
      return notes.toString('hex', desc, desc + descsz);
    o = desc + ((descsz + 3) & ~3);
  }
  return undefined;
}

export class ProgramIdentity {
  private readonly prints = new Map<string, Fingerprint | null>();
  private readonly hashes = new Map<string, string>();
  private named: Named[] = [];
  private namesKey = '';
  /** raised each time the named programs are read anew (setNames with other names) */
  private generation = 0;

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
        const print = this.printOf(real, st);
        if (print) named.push({ name: basename(name), file: real, print });
      }
    }
    this.named = named;
    this.generation++;
  }

  /**
   * Everything `identify` reads besides the file it is given: the named programs as read (which reading),
   * and each named file as stat(2) sees it now (its hash is read again when it changed). Two calls that return
   * the same text identify a file of the same identity alike (src/daemon/reuse-presets.ts, PresetMemo).
   * One stat per named program.
   */
  state(): string {
    const parts = [String(this.generation)];
    for (const n of this.named) {
      const st = statOrNull(n.file);
      parts.push(st ? `${n.file}:${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}` : `${n.file}:-`);
    }
    return parts.join('\0');
  }

  /** The rule name whose program is the same program as `file`, if any (undefined: not one of them): the same
   * build-id, or the same loaded segments (layout, then bytes), or for a file that is not ELF the same bytes. */
  identify(file: string): string | undefined {
    if (this.named.length === 0) return undefined;
    const st = statOrNull(file);
    if (!st?.isFile()) return undefined;
    const print = this.printOf(file, st);
    if (!print) return undefined;
    for (const n of this.named) if (print.buildId !== undefined && print.buildId === n.print.buildId) return n.name;
    for (const n of this.named) {
      const sameShape = print.load !== undefined ? print.load === n.print.load : n.print.load === undefined && print.size === n.print.size;
      if (!sameShape) continue;
      const mine = this.hashOf(file, st, print);
      if (mine === undefined) continue;
      const nst = statOrNull(n.file);
      if (nst && mine === this.hashOf(n.file, nst, n.print)) return n.name;
    }
    return undefined;
  }

  /** A file's fingerprint, cached by device, inode, size and both times. */
  private printOf(file: string, st: Stats): Fingerprint | null {
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    if (this.prints.has(key)) return this.prints.get(key) ?? null;
    let print: Fingerprint | null = null;
    if (st.size > 0 && st.size <= MAX_HASHED) {
      const head = readPart(file, 0, Math.min(HEAD_BYTES, st.size));
      if (head) print = elfFingerprint(head, st.size) ?? { size: st.size };
    }
    if (this.prints.size >= 4096) this.prints.delete(this.prints.keys().next().value!);
    this.prints.set(key, print);
    return print;
  }

  /** SHA-256 of the loaded segments (ELF), or of the whole file; cached like the fingerprint. */
  private hashOf(file: string, st: Stats, print: Fingerprint): string | undefined {
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    let h = this.hashes.get(key);
    if (h !== undefined) return h;
    const hash = createHash('sha256');
    if (print.segments) {
      for (const s of print.segments) {
        const part = s.size === 0 ? Buffer.alloc(0) : readPart(file, s.offset, s.size);
        if (!part || part.length !== s.size) return undefined;
        hash.update(part);
      }
    } else {
      try {
        hash.update(readFileSync(file));
      } catch {
        return undefined;
      }
    }
    h = hash.digest('hex');
    if (this.hashes.size >= 4096) this.hashes.delete(this.hashes.keys().next().value!);
    this.hashes.set(key, h);
    return h;
  }
}

/** `length` bytes of a file from `offset` (fewer at its end), or null when it cannot be read. */
function readPart(file: string, offset: number, length: number): Buffer | null {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const buf = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, offset + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
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
 * sandbox; what the file holds is untrusted text, decided, never run here.
 */
export function kernelCommandOf(
  req: { program: string; program_file?: string; argv: readonly string[]; cwd: string; kernel_argv?: string[] },
  identity: ProgramIdentity,
): KernelCommand | null | 'unreadable' {
  const view = processView(req);
  // the supervisor's reading, made before it asked, is what the exec is checked against after it happened:
  // decided as read there (a script rewritten between two readings cannot split the decision from the check)
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
