/**
 * SandboxPolicy / PermissionProfile → bubblewrap arguments (everything between `bwrap` and the command,
 * ending in `--`). Pure: the filesystem is looked at only through the injected FsView (each path once per
 * build: memoFs).
 *
 * Always: `--cap-drop ALL` (as root, bwrap's read-only binds can otherwise be unmounted or remounted rw
 * from inside), `--die-with-parent` (bwrap forwards no signals), `--unshare-pid`, `--proc /proc`,
 * `--dev /dev`; `--unshare-net` when network is off or "rules" (then the run's proxy folder is bound last); `--new-session` unless the run is interactive
 * (see docs/sandbox.md: it stops TIOCSTI terminal injection but takes away the controlling terminal);
 * the daemon's request folder last, read-only, with only its clients' folder writable (requestDir below).
 * Trust boundary: everything inside the sandbox is untrusted; these arguments are all that confines it.
 */
import { posix } from 'node:path';
import type { PermissionProfile, SandboxPolicy } from './policy.js';
import { memoFs, nodeFs, type FsView } from './fs-view.js';
import { SandboxError } from './errors.js';
import { isWithin, mountArgs, normAbs, sortRoots, type MountOp } from './mounts.js';
import { hidePath, protectAncestors, protectedNames, protectExtra, protectRoot } from './protected.js';
import { resolveProfile } from './profile-paths.js';
import { socketFileMasks, socketFolderMasks, type SocketView } from './sockets.js';
import { secretMasks, type SecretGrants } from './secrets.js';

export interface CriticalPath {
  path: string;
  /** a file: when missing, an empty read-only file blocks it (a folder there would break its reader) */
  file?: boolean;
}

export interface SandboxContext {
  cwd: string;
  env: Record<string, string | undefined>;
  /** bound read-only at the same absolute path: the request channel's sockets live there (the daemon's,
   *  which nothing inside may unlink or replace) */
  runtimeRequestDir?: string;
  /** the run's own client folder (`<request folder>/c/<run id>`, src/paths/paths.ts runClientDir): the
   *  clients' folder is an empty read-only folder inside, with this one bound read-write in it alone, so
   *  that no run sees or touches another's reply sockets; absent: no client folder at all (fail closed) */
  runtimeClientDir?: string;
  /** invisible inside (the approval folder) */
  hiddenPaths: readonly string[];
  /** folders read-only inside even within writable roots (GATE_HOME, CODEX_HOME); a Permissions profile's
   *  explicit write paths inside them stay writable (a skill under ~/.codex/skills writing its own output) */
  protectedExtra: readonly string[];
  /** read-only always, even under a profile's write path: rules folders (dirs) and config / audit files */
  critical?: readonly CriticalPath[];
  /** default: the real filesystem */
  fs?: FsView;
  /** readable even when a profile restricts reads: gate-sh's own installation (libgate.so, the shims) */
  alwaysReadable?: readonly string[];
  /** false keeps the caller's session and controlling terminal (interactive use); default true */
  newSession?: boolean;
  /** the host's Unix sockets to mask (src/sandbox/sockets.ts): folders hidden whole, path sockets bound on
   *  the host; absent: none masked (tests of other mounts) */
  hostSockets?: { folders: readonly string[]; listed: readonly string[] };
  /** GATE_HOME and CODEX_HOME: under the guard of a run without a sandbox (gate-state.ts), read-only and
   *  made when missing */
  gateHomes?: readonly string[];
  /** credential locations hidden inside (src/sandbox/secrets.ts: absolute, existing or not; only existing
   *  ones are masked); absent: none (tests of other mounts) */
  secrets?: readonly string[];
  /** the empty read-only regular file bound over a hidden file (default /dev/null: then unreadable) */
  secretFile?: string;
  /** network "rules": the folder of this run's proxy socket (src/sandbox/network-bridge.ts), bound read-only
   *  last; absent or missing: a "rules" sandbox has no network at all (fails closed) */
  networkProxyDir?: string;
}

/** Folders readable when a profile restricts reads: enough to start programs, nothing of the user's. */
export const PLATFORM_READ = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc'] as const;

/** The turn sandbox, or null for no wrapping at all (danger-full-access, external sandbox with network). */
export function turnSandboxArgv(policy: SandboxPolicy, ctx: SandboxContext): string[] | null {
  const fs = memoFs(ctx.fs ?? nodeFs);
  switch (policy.type) {
    case 'danger-full-access':
      return null;
    case 'external-sandbox': {
      if (policy.network_access === 'enabled') return null;
      // No filesystem restriction (the outer sandbox has it), but still no network and no approval channel.
      const ops: MountOp[] = [{ op: 'bind', src: '/', dest: '/' }];
      const v = socketView(ctx, [ctx.cwd]);
      if (v) ops.push(...socketFolderMasks(v, ops, fs));
      ops.push(...hidden(ctx, ops, fs));
      ops.push(...secrets(ctx, ops, fs));
      if (v) ops.push(...socketFileMasks(v, ops, fs));
      return assemble([...ops, ...requestDir(ctx, fs)], false, ctx);
    }
    case 'read-only': {
      const ops: MountOp[] = [{ op: 'ro-bind', src: '/', dest: '/' }];
      return assemble([...ops, ...gateMounts(ctx, ops, fs, [], NO_GRANTS)], false, ctx);
    }
    case 'workspace-write': {
      const cwd = existingRoot(ctx.cwd, 'the working folder', fs);
      const roots = [cwd, ...policy.writable_roots.map((r) => existingRoot(r, 'writable root', fs))];
      // an agent's folder it deletes and re-creates: skipped while missing (nothing can be written there then)
      for (const r of policy.agent_writable_roots ?? []) if (fs.realpath(r) !== null) roots.push(existingRoot(r, 'agent writable root', fs));
      // the run's own (its sockets are its own servers'); /tmp and $TMPDIR below are the host's, shared
      const own = [...roots];
      if (!policy.exclude_slash_tmp && fs.realpath('/tmp')) roots.push(fs.realpath('/tmp')!);
      const tmpdir = ctx.env.TMPDIR;
      if (!policy.exclude_tmpdir_env_var && tmpdir && tmpdir.startsWith('/') && fs.realpath(tmpdir)) roots.push(fs.realpath(tmpdir)!);
      const sorted = sortRoots(roots);
      const ops: MountOp[] = [{ op: 'ro-bind', src: '/', dest: '/' }, ...sorted.map((r): MountOp => ({ op: 'bind', src: r, dest: r }))];
      const names = protectedNames(ctx.env);
      // nested repositories are looked for in the workspace and declared roots, not in /tmp or $TMPDIR
      const declared = new Set([cwd, ...policy.writable_roots.map((r) => fs.realpath(r))]);
      for (const r of sorted) ops.push(...protectRoot(r, fs, { before: ops, names, nested: declared.has(r) }));
      ops.push(...protectAncestors(cwd, sorted, fs, ops));
      // "rules": no network of its own; the run's proxy folder is its only way out (network-bridge.ts)
      const proxy = policy.network_access === 'rules' ? proxyDir(ctx, fs) : [];
      return assemble([...ops, ...gateMounts(ctx, ops, fs, own, NO_GRANTS), ...proxy], policy.network_access === true, ctx);
    }
  }
}

/** Exactly the profile's permissions: write paths read-write, reads restricted when a `read` list is given. */
export function permissionProfileArgv(profile: PermissionProfile, ctx: SandboxContext): string[] {
  const fs = memoFs(ctx.fs ?? nodeFs);
  const p = resolveProfile(profile, fs);
  const ops: MountOp[] = [];
  if (p.read === 'all') ops.push({ op: 'ro-bind', src: '/', dest: '/' });
  else {
    for (const d of PLATFORM_READ) {
      const kind = fs.kind(d);
      const link = kind === 'symlink' ? fs.readlink(d) : null;
      if (link !== null) ops.push({ op: 'symlink', target: link, dest: d });
      else if (kind === 'dir') ops.push({ op: 'ro-bind', src: d, dest: d });
    }
    // The root is bwrap's own empty tmpfs here, so a private /tmp costs no host permission. Before the
    // binds: a tmpfs mounted later would hide read or write paths below /tmp.
    ops.push({ op: 'tmpfs', dest: '/tmp' });
    const always = (ctx.alwaysReadable ?? []).map((a) => fs.realpath(a)).filter((a): a is string => a !== null);
    for (const r of sortRoots([...always, ...p.read])) ops.push({ op: 'ro-bind', src: r, dest: r });
  }
  // With reads unrestricted, /tmp is the host's and, like everything else, read-only unless declared.
  const roots = sortRoots(p.write);
  for (const r of roots) ops.push({ op: 'bind', src: r, dest: r });
  const names = protectedNames(ctx.env);
  for (const r of roots) ops.push(...protectRoot(r, fs, { before: ops, names }));
  // the paths it names are granted: a hidden secret location named there is visible in this run
  const grants: SecretGrants = { read: p.named, write: p.write };
  ops.push(...gateMounts(ctx, ops, fs, roots, grants, (extra) => {
    // declared write paths naming gate-sh's or Codex's folders or paths inside them: bound again after the
    // folder's protection (a write path that merely contains such a folder does not reopen it)
    const inside = roots.filter((r) => extra.some((e) => isWithin(r, e)));
    const again: MountOp[] = inside.map((r): MountOp => ({ op: 'bind', src: r, dest: r }));
    for (const r of inside) again.push(...protectRoot(r, fs, { before: [...ops, ...again], names }));
    return again;
  }));
  const visible = p.read === 'all' ? ['/'] : [...p.read, ...p.write, ...PLATFORM_READ, ...(ctx.alwaysReadable ?? [])];
  const cwd = normAbs(ctx.cwd);
  return assemble(ops, p.network, ctx, visible.some((v) => isWithin(cwd, v)) ? cwd : '/');
}

function existingRoot(p: string, what: string, fs: FsView): string {
  if (!p.startsWith('/')) throw new SandboxError(`${what} '${p}' is not an absolute path`);
  const real = fs.realpath(p);
  if (real === null || fs.kind(real) !== 'dir') throw new SandboxError(`${what} '${p}' does not exist or is not a folder`);
  if (real === '/') throw new SandboxError(`${what} '${p}' would make the whole filesystem writable; say danger-full-access if that is meant`);
  return real;
}

const NO_GRANTS: SecretGrants = { read: [], write: [] };

/**
 * gate-sh's own, after `before` (the mounts so far): protected folders, (profile exceptions), critical
 * paths, hidden paths, secrets (but what a profile names: `grants`), the host's sockets (`own`: the run's
 * own folders, whose sockets stay), the request folder. Whether a missing path needs blocking depends on the mounts before it, so each step sees
 * everything emitted until then.
 */
function gateMounts(
  ctx: SandboxContext,
  before: readonly MountOp[],
  fs: FsView,
  own: readonly string[],
  grants: SecretGrants,
  exceptions?: (extra: string[]) => MountOp[],
): MountOp[] {
  const ops: MountOp[] = [...before];
  const extra = ctx.protectedExtra.map((p) => fs.realpath(p) ?? normAbs(p));
  for (const p of ctx.protectedExtra) ops.push(...protectExtra(normAbs(p), ops, fs));
  if (exceptions) ops.push(...exceptions(extra));
  for (const c of ctx.critical ?? []) ops.push(...protectExtra(normAbs(c.path), ops, fs, c.file === true));
  const v = socketView(ctx, own);
  if (v) ops.push(...socketFolderMasks(v, ops, fs));
  ops.push(...hidden(ctx, ops, fs));
  ops.push(...secrets(ctx, ops, fs, own, grants));
  if (v) ops.push(...socketFileMasks(v, ops, fs));
  return [...ops.slice(before.length), ...requestDir(ctx, fs)];
}

/** The credential locations (src/sandbox/secrets.ts), on top of everything but the socket masks: a folder
 * of the run's own (the cwd, `own`) that a mask would hide is refused, unless a grant covers it. */
function secrets(ctx: SandboxContext, before: readonly MountOp[], fs: FsView, own: readonly string[] = [], grants = NO_GRANTS): MountOp[] {
  if (!ctx.secrets?.length) return [];
  const granted = [...grants.read, ...grants.write];
  const mine = [normAbs(ctx.cwd), ...own].filter((o) => !granted.some((g) => isWithin(fs.realpath(o) ?? o, g)));
  return secretMasks(ctx.secrets, before, fs, { file: ctx.secretFile, grants, own: mine });
}

function socketView(ctx: SandboxContext, own: readonly string[]): SocketView | null {
  if (!ctx.hostSockets) return null;
  // a folder hidden anyway (this session's runtime folder) is not hidden twice
  const hidden = new Set(ctx.hiddenPaths.map(normAbs));
  return { ...ctx.hostSockets, folders: ctx.hostSockets.folders.filter((f) => !hidden.has(normAbs(f))), own, requestDir: ctx.runtimeRequestDir };
}

function hidden(ctx: SandboxContext, before: readonly MountOp[], fs: FsView): MountOp[] {
  const ops: MountOp[] = [...before];
  for (const p of ctx.hiddenPaths) ops.push(...hidePath(normAbs(p), ops, fs));
  return ops.slice(before.length);
}

/**
 * Last, so nothing above hides it; only if it exists (no daemon, no channel to reach). Read-only: a bind
 * shares the folder with the host, so a process that could unlink request.sock, stream.sock or
 * escalate.sock there would take the daemon's socket away from everybody and could bind its own in its
 * place, a fake daemon answering Run to every exec check (connecting and sending to a socket on a
 * read-only mount still works). The clients' folder is an empty read-only tmpfs, with only the run's own
 * client folder bound read-write in it (a background job of one run could otherwise unlink the reply
 * sockets of every other run in a shared folder): and only when it is a folder right inside (a symlink pointing
 * elsewhere would make its target writable); without it the clients inside cannot bind a reply socket and
 * fail closed. The three ops stay together in this order (`--ro-bind Q Q --tmpfs Q/c --bind Q/c/R Q/c/R`):
 * a session sandbox holds the mounts without the run's bind, and each command joining it binds its own
 * folder (src/sandbox/session-join.ts runFolderBind, shims/gate-join.c).
 */
function requestDir(ctx: SandboxContext, fs: FsView): MountOp[] {
  const real = ctx.runtimeRequestDir ? fs.realpath(ctx.runtimeRequestDir) : null;
  if (!real) return [];
  const ops: MountOp[] = [{ op: 'ro-bind', src: real, dest: real }];
  const base = posix.join(real, 'c');
  if (fs.kind(base) !== 'dir') return ops;
  ops.push({ op: 'empty-ro', dest: base });
  const own = ctx.runtimeClientDir ? fs.realpath(ctx.runtimeClientDir) : null;
  if (own && posix.dirname(own) === base && fs.kind(own) === 'dir') ops.push({ op: 'bind', src: own, dest: own });
  return ops;
}

/** The run's proxy folder, read-only at the same path (connecting works on a read-only mount; unlinking the
 * socket or binding another in its place does not), when it exists. */
function proxyDir(ctx: SandboxContext, fs: FsView): MountOp[] {
  const real = ctx.networkProxyDir ? fs.realpath(ctx.networkProxyDir) : null;
  return real && fs.kind(real) === 'dir' ? [{ op: 'ro-bind', src: real, dest: real }] : [];
}

function assemble(ops: MountOp[], network: boolean, ctx: SandboxContext, chdir = normAbs(ctx.cwd)): string[] {
  const [base, ...rest] = ops;
  return [
    ...mountArgs([base, { op: 'dev', dest: '/dev' }, { op: 'proc', dest: '/proc' }, ...rest]),
    '--unshare-pid',
    ...(network ? [] : ['--unshare-net']),
    '--die-with-parent',
    ...(ctx.newSession === false ? [] : ['--new-session']),
    '--cap-drop', 'ALL',
    '--chdir', chdir,
    '--',
  ];
}
