/**
 * The host's Unix sockets out of the sandbox's reach (docs/sandbox.md, "Unix sockets of the host"): a
 * read-only bind does not stop `connect()` to a path socket, so a sandboxed `tmux send-keys` typed into
 * the user's own shell, and a second gate-sh daemon's approval socket took `gate config set`. The only
 * sockets a sandbox may reach are its session's request channel (bound back last by bwrap-argv.ts).
 *
 * Two kinds of mask (mount operations):
 * - socket folders (the user's runtime folder /run/user/<uid>, $XDG_RUNTIME_DIR, X11's and tmux's and
 *   screen's folders, every runtime folder a gate-sh daemon of this user may use): an empty read-only folder
 *   over the whole folder when it exists, so a socket made there later (a tmux server started after a
 *   session sandbox was built) is out of reach too; skipped when the working folder, a writable root or a
 *   declared path inside it (hiding it would hide the run's own files; its sockets are then masked
 *   one by one below). Before the hidden paths, which may lie inside one and are mounted in it;
 * - every other serving path socket bound on the host when the sandbox is planned (the kernel's list,
 *   /proc/net/unix of the host's network namespace: ssh-agent's, docker's, D-Bus's, an editor's, another
 *   gate-sh session's request, stream, escalation and approval sockets; not its clients' reply sockets): the empty device /dev/null bound over it, so
 *   `connect()` is refused. After every other mount but the request folder. Sockets in the run's own
 *   folders (the working folder, writable roots, a profile's write paths) stay: the run's own servers.
 *   These masks are not bubblewrap's to mount: the launcher mounts them in the sandbox once it is built,
 *   before anything runs in it, skipping a socket gone by then and refusing the run when one that is there
 *   cannot be masked (shims/gate-masks.h); a session sandbox's held mounts carry none, each command joining
 *   mounts its own.
 * Abstract sockets have no path: a network namespace of its own separates them (`--unshare-net`); with
 * the network on, gate-launch scopes the run with Landlock (docs/sandbox.md).
 *
 * The limits accepted: a socket bound on the host after the listing, outside the socket folders above, in a
 * folder the sandbox sees (a new ssh-agent under /tmp), is reachable from the sandbox (and from the jobs a
 * command leaves in a session sandbox) until a later command's sandbox lists it; so is one bound again at
 * the path of a masked socket that was removed (the kernel detaches a mount whose mount point is unlinked).
 * Pure: the filesystem is seen through the injected FsView, the socket list is given.
 * Trust boundary: the host's sockets are the host's; everything inside the sandbox is untrusted.
 */
import { posix } from 'node:path';
import type { FsView } from './fs-view.js';
import { isWithin, normAbs, seenFromHost as visible, type MountOp } from './mounts.js';

export interface SocketView {
  /** folders of sockets hidden whole when they exist (see the header) */
  folders: readonly string[];
  /** path sockets bound on the host (absolute paths from /proc/net/unix) */
  listed: readonly string[];
  /** the run's own folders (the working folder, declared writable roots: not /tmp or $TMPDIR, which the
   *  host shares): sockets in them stay reachable, folders containing them are not hidden */
  own: readonly string[];
  /** the request folder (its sockets are the request channel) */
  requestDir?: string;
}

/**
 * The path sockets of /proc/net/unix's text that serve: listening stream and seqpacket sockets, and bound
 * datagram sockets (a datagram server cannot be told from a bound client); each once. Abstract (`@...`),
 * unnamed and accepted or connecting stream sockets are left out.
 */
export function parseProcNetUnix(text: string): string[] {
  const out = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    // Num RefCount Protocol Flags Type St Inode Path: the path is the rest after seven fields (it may hold spaces)
    const m = /^\s*\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s(.+)$/.exec(line);
    if (!m?.[3].startsWith('/')) continue;
    const listening = (parseInt(m[1], 16) & 0x10000) !== 0; // __SO_ACCEPTCON
    const dgram = parseInt(m[2], 16) === 2;
    if (listening || dgram) out.add(m[3]);
  }
  return [...out];
}

/**
 * A reply socket of a gate-sh session's clients (`<runtime>/<session>/req/c/...`): not masked one by one.
 * Each lives for one answer: most are gone by the time the sandbox is built, the others would each cost a
 * mount, and a client's reply socket is connected to its daemon's, so nothing else can send it a reply.
 * Another session's request, stream and escalation sockets (`req/*.sock`) are masked like any socket of the
 * host: excepting the whole request folder let a sandbox connect to a second session's request
 * channel when that session's runtime folder lay outside the folders hidden whole. This session's own
 * request folder is left out by the caller (requestDir).
 */
function replySocket(p: string): boolean {
  return /\/gate-sh(?:-\d+)?\/[A-Za-z0-9._-]{1,32}\/req\/c\//.test(p);
}

/** The socket folders hidden whole, given every mount before them: before the hidden paths, which may lie
 * inside one (the runtime folder in /run/user/<uid>) and are then mounted in its empty folder. */
export function socketFolderMasks(v: SocketView, before: readonly MountOp[], fs: FsView): MountOp[] {
  const ops: MountOp[] = [...before];
  const own = v.own.map((o) => fs.realpath(o) ?? normAbs(o));
  const binds = before.filter((m) => (m.op === 'bind' || m.op === 'ro-bind') && m.dest !== '/').map((m) => m.dest);
  for (const f of new Set(v.folders)) {
    // most of these folders are absent: an lstat says so without the exception a failed realpath throws
    if (fs.kind(f) === null) continue;
    const real = fs.realpath(f);
    if (real === null || real === '/' || fs.kind(real) !== 'dir' || !visible(ops, real)) continue;
    // a run's own folder or a declared path inside it: hiding the folder would hide them
    if (own.some((o) => isWithin(o, real)) || binds.some((b) => b !== real && isWithin(b, real))) continue;
    ops.push({ op: 'empty-ro', dest: real });
  }
  return ops.slice(before.length);
}

/** The path sockets still seen after every other mount (the request folder's aside): masked one by one. */
export function socketFileMasks(v: SocketView, before: readonly MountOp[], fs: FsView): MountOp[] {
  const own = v.own.map((o) => fs.realpath(o) ?? normAbs(o));
  const req = v.requestDir ? (fs.realpath(v.requestDir) ?? normAbs(v.requestDir)) : null;
  const ops: MountOp[] = [];
  const masked = new Set<string>();
  for (const s of v.listed) {
    if (!s.startsWith('/') || replySocket(s)) continue;
    const real = fs.realpath(s);
    if (real === null || masked.has(real) || fs.kind(real) !== 'other') continue;
    if ((req && isWithin(real, req)) || own.some((o) => isWithin(real, o)) || !visible(before, real)) continue;
    masked.add(real);
    ops.push({ op: 'socket-mask', dest: real });
  }
  return ops;
}

/** The socket folders of this user (uid) and environment, gate-sh's runtime folders among them. */
export function socketFolders(uid: number, env: Record<string, string | undefined>, runtimes: readonly string[]): string[] {
  const xdg = env.XDG_RUNTIME_DIR?.startsWith('/') ? [env.XDG_RUNTIME_DIR] : [];
  const tmux = env.TMUX_TMPDIR?.startsWith('/') ? [posix.join(env.TMUX_TMPDIR, `tmux-${uid}`)] : [];
  return [
    `/run/user/${uid}`,
    ...xdg,
    '/tmp/.X11-unix',
    '/tmp/.ICE-unix',
    `/tmp/tmux-${uid}`,
    ...tmux,
    '/run/screen',
    '/var/run/screen',
    `/tmp/gate-sh-${uid}`,
    `/run/user/${uid}/gate-sh`,
    ...runtimes,
  ];
}
