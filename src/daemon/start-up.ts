/**
 * Whether a run gets a start-up phase (design in docs/startup-phase.md). Not pure: it reads the
 * key file and stats the start-up files.
 *
 * Trust boundary: the phase is asked for by the gate-sh client, which runs outside every sandbox, with a
 * key that only the daemon and processes outside the sandbox can read (the approval folder is never
 * mounted inside one). It is granted only when nothing the agent or a sandboxed script could have written
 * takes part in start-up: no start-up file inside a folder the turn sandbox can write, none changed since
 * this daemon started, no exported shell functions in the caller's environment. The phase ends when the
 * client says so, which it does before bash reads the script's first command (src/exec/start-up-gate.ts);
 * once ended it never comes back for that run.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type GatePaths, RUNTIME_LAYOUT } from '../paths/index.js';
import type { SandboxPolicy } from '../sandbox/index.js';
import type { StartUpRequest } from '../protocol/index.js';

export const START_UP_KEY_FILE = RUNTIME_LAYOUT.startUpKey;

export function startUpKeyPath(paths: Pick<GatePaths, 'approvalDir'>): string {
  return join(paths.approvalDir, START_UP_KEY_FILE);
}

/** A fresh key for this daemon (owner-only, in the approval folder): returns it. */
export function writeStartUpKey(paths: Pick<GatePaths, 'approvalDir'>): string {
  const key = randomBytes(24).toString('hex');
  writeFileSync(startUpKeyPath(paths), key + '\n', { mode: 0o600 });
  return key;
}

export function keyMatches(key: string, given: string): boolean {
  const a = Buffer.from(key);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The files bash may read before a non-interactive script (login or not), as candidates (may not exist). */
export function startUpFiles(home: string | undefined, bashEnv: string | undefined): string[] {
  const files = ['/etc/profile', '/etc/bash.bashrc'];
  try {
    for (const f of readdirSync('/etc/profile.d')) if (f.endsWith('.sh')) files.push(join('/etc/profile.d', f));
  } catch {
    // no /etc/profile.d
  }
  if (home) for (const f of ['.bash_profile', '.bash_login', '.profile', '.bashrc']) files.push(join(home, f));
  if (bashEnv) files.push(bashEnv);
  return files;
}

/** The folders a sandboxed script of this turn can write (what a start-up file must not be inside). */
export function scriptWritableRoots(policy: SandboxPolicy, cwd: string, tmpdir: string | undefined): string[] {
  switch (policy.type) {
    case 'read-only':
      return [];
    case 'workspace-write': {
      const roots = [cwd, ...policy.writable_roots, ...(policy.agent_writable_roots ?? [])];
      if (!policy.exclude_slash_tmp) roots.push('/tmp');
      if (!policy.exclude_tmpdir_env_var && tmpdir) roots.push(tmpdir);
      return roots;
    }
    default:
      return [cwd, '/tmp', '/var/tmp', '/dev/shm']; // no filesystem sandbox: the likely plants
  }
}

/** One realpath(3) (the JS realpathSync lstats every component: this runs at every pre-flight). */
function real(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

function inside(path: string, root: string): boolean {
  const r = root.replace(/\/+$/, '');
  return path === r || path.startsWith(r + '/');
}

export interface StartUpCheck {
  req: StartUpRequest;
  policy: SandboxPolicy;
  cwd: string;
  /** the daemon's start: a start-up file changed since then was changed during this session */
  since: Date;
}

/** Why this run gets no start-up phase, or null when it does. */
export function startUpRefusal(c: StartUpCheck): string | null {
  if (c.req.functions.length > 0) return `exported shell functions in the environment: ${c.req.functions.join(', ')}`;
  const roots = scriptWritableRoots(c.policy, c.cwd, c.req.tmpdir).map(real);
  for (const f of startUpFiles(c.req.home, c.req.bash_env)) {
    let st;
    try {
      // most candidates are absent: asked without a thrown ENOENT (this runs at every pre-flight)
      st = statSync(f, { throwIfNoEntry: false });
    } catch {
      continue; // unreadable: bash skips it too
    }
    if (st === undefined) continue; // absent: bash skips it too
    const p = real(f);
    if (roots.some((r) => inside(p, r))) return `start-up file ${f} is writable in the sandbox`;
    if (st.ctimeMs > c.since.getTime()) return `start-up file ${f} changed during this session`;
    if ((st.mode & 0o022) !== 0) return `start-up file ${f} is writable by others`;
  }
  return null;
}
