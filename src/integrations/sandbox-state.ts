/**
 * The sandbox a host (Codex) asks for → a gate-sh SandboxPolicy. Pure. Two carriers:
 * - the shell-tool MCP's request/notification `codex/sandbox-state/update`, params `{sandboxPolicy,
 *   sandboxCwd?, codexLinuxSandboxExe?, ...}`;
 * - Codex 0.169 and later: every `tools/call`'s `_meta` under `codex/sandbox-state` (and the same under
 *   `codex/sandbox-state-meta`), sent to a server that declares the capability, `{permissionProfile,
 *   sandboxCwd: "file:///...", codexLinuxSandboxExe, useLegacyLandlock, ...}` (read from what Codex 0.169.0
 *   and 0.171.0 send; `codex exec` asks read-only unless told `--sandbox workspace-write`).
 *
 * gate-sh's workspace-write workspace is each run's cwd; Codex's is `sandboxCwd`, so a sandboxCwd is added
 * to writable_roots (a command run in a subfolder may still write the whole workspace, as in Codex).
 * What gate-sh cannot apply as asked (reads restricted to some folders, deny entries, a kind of entry it does
 * not know) is refused (SandboxStateError), never ignored: a looser sandbox than asked must not run quietly.
 * Read-only entries inside writable folders (Codex's `.git`, `.codex`, `.agents`, ...) are Codex's
 * protected paths; gate-sh applies its own there (src/sandbox/protected.ts: code-running git configuration
 * and agent folders read-only, git's own writes allowed so a commit works in the sandbox).
 */
import { fileURLToPath } from 'node:url';
import { parseSandboxPolicy, type SandboxPolicy } from '../sandbox/index.js';

export const SANDBOX_STATE_METHOD = 'codex/sandbox-state/update';
export const SANDBOX_STATE_CAPABILITY = 'codex/sandbox-state';
export const SANDBOX_STATE_META_CAPABILITY = 'codex/sandbox-state-meta';
export const SANDBOX_STATE_VERSION = '1.0.0';

export class SandboxStateError extends Error {}

/** The sandbox state a `tools/call` carries in its `_meta`, or undefined when it carries none. */
export function sandboxStateOfCall(meta: unknown): unknown {
  if (!meta || typeof meta !== 'object') return undefined;
  const m = meta as Record<string, unknown>;
  return m[SANDBOX_STATE_CAPABILITY] ?? m[SANDBOX_STATE_META_CAPABILITY];
}

/** An absolute path, or a `file:` URL naming one. */
function absolutePath(v: unknown, what: string): string {
  let p = v;
  if (typeof v === 'string' && v.startsWith('file:')) {
    try {
      p = fileURLToPath(v);
    } catch (e) {
      throw new SandboxStateError(`${what} ${JSON.stringify(v)} is not a file URL: ${(e as Error).message}`);
    }
  }
  if (typeof p !== 'string' || !p.startsWith('/')) throw new SandboxStateError(`${what} must be an absolute path`);
  return p;
}

export function sandboxPolicyFromState(params: unknown): SandboxPolicy {
  if (!params || typeof params !== 'object' || Array.isArray(params)) throw new SandboxStateError('missing params for sandbox state request');
  const o = params as Record<string, unknown>;
  const cwd = o.sandboxCwd === undefined || o.sandboxCwd === null ? undefined : absolutePath(o.sandboxCwd, '"sandboxCwd"');
  if (o.sandboxPolicy === undefined && o.permissionProfile !== undefined) return policyFromPermissionProfile(o.permissionProfile, cwd);
  if (o.sandboxPolicy === undefined) throw new SandboxStateError('sandbox state needs "sandboxPolicy" or "permissionProfile"');
  let policy: SandboxPolicy;
  try {
    policy = parseSandboxPolicy(o.sandboxPolicy);
  } catch (e) {
    throw new SandboxStateError(`failed to deserialize sandbox state: ${(e as Error).message}`);
  }
  for (const r of policy.type === 'workspace-write' ? policy.writable_roots : [])
    if (!r.startsWith('/')) throw new SandboxStateError(`writable root ${JSON.stringify(r)} must be an absolute path`);
  if (policy.type === 'workspace-write' && cwd && !policy.writable_roots.includes(cwd)) return { ...policy, writable_roots: [...policy.writable_roots, cwd] };
  return policy;
}


/** Codex's network policy: `enabled`, or `restricted` (none). */
function network(v: unknown): boolean {
  if (v === 'enabled') return true;
  if (v === 'restricted') return false;
  throw new SandboxStateError(`unknown network policy ${JSON.stringify(v)} (enabled or restricted)`);
}

/**
 * Codex's PermissionProfile: `{type: "disabled"}` (no sandbox), `{type: "external", network}` (another
 * sandbox around it), `{type: "managed", file_system: {type: "unrestricted"} | {type: "restricted", entries:
 * [{path: {type: "path", path} | {type: "special", value: {kind}}, access: "read" | "write"}]}, network}`.
 */
export function policyFromPermissionProfile(profile: unknown, cwd: string | undefined): SandboxPolicy {
  const p = (profile ?? {}) as Record<string, unknown>;
  if (p.type === 'disabled') return { type: 'danger-full-access' };
  if (p.type === 'external') return { type: 'external-sandbox', network_access: network(p.network) ? 'enabled' : 'restricted' };
  if (p.type !== 'managed') throw new SandboxStateError(`unknown permission profile ${JSON.stringify(profile)}`);
  const net = network(p.network);
  const fs = (p.file_system ?? {}) as Record<string, unknown>;
  if (fs.type === 'unrestricted') return net ? { type: 'danger-full-access' } : everything(false);
  if (fs.type !== 'restricted' || !Array.isArray(fs.entries)) throw new SandboxStateError(`unknown file system permissions ${JSON.stringify(fs)}`);
  const roots: string[] = [];
  let readsAll = false;
  let writesAll = false;
  let slashTmp = false;
  let tmpdir = false;
  for (const e of fs.entries as Record<string, unknown>[]) {
    const path = (e?.path ?? {}) as Record<string, unknown>;
    const kind = path.type === 'special' ? (path.value as Record<string, unknown> | undefined)?.kind : undefined;
    const shown = JSON.stringify(e);
    if (e?.access === 'read') {
      if (kind === 'root') readsAll = true;
      // a read of one folder adds nothing to a read of everything; a read inside a writable folder is
      // Codex's protected path (see the header)
      continue;
    }
    if (e?.access !== 'write') throw new SandboxStateError(`a sandbox entry gate-sh cannot apply: ${shown} (only read and write access)`);
    if (path.type === 'path') roots.push(absolutePath(path.path, 'a writable path'));
    else if (kind === 'root') writesAll = true;
    else if (kind === 'slash_tmp') slashTmp = true;
    else if (kind === 'tmpdir') tmpdir = true;
    else if ((kind === 'project_roots' || kind === 'current_working_directory') && cwd) roots.push(cwd);
    else throw new SandboxStateError(`a writable entry gate-sh cannot apply: ${shown}`);
  }
  // gate-sh's sandbox always reads everything: a host that reads less cannot get what it asked
  if (!readsAll) throw new SandboxStateError('the host asks for a sandbox that reads only some folders; gate-sh\'s sandbox reads everything');
  if (writesAll) return net ? { type: 'danger-full-access' } : everything(false);
  // no folder of its own to write (at most /tmp): gate-sh's workspace-write always writes the run's folder,
  // so the nearest it can apply without widening is read-only
  if (roots.length === 0) return { type: 'read-only' };
  return {
    type: 'workspace-write',
    writable_roots: [...new Set(roots)],
    network_access: net,
    exclude_tmpdir_env_var: !tmpdir,
    exclude_slash_tmp: !slashTmp,
  };
}

/** Every folder writable, with or without the network: as workspace-write, whose narrowing keeps gate-sh's own roots. */
function everything(net: boolean): SandboxPolicy {
  return { type: 'workspace-write', writable_roots: ['/'], network_access: net, exclude_tmpdir_env_var: false, exclude_slash_tmp: false };
}
