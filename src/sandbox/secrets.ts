/**
 * Secrets out of the sandbox's reach (docs/secrets.md): the credential locations every sandbox
 * gate-sh builds hides — the turn sandbox (read-only, workspace-write, an external sandbox gate-sh still
 * wraps), session sandboxes (their mounts are the plan's), Permissions(profile) runs (skills, escalations
 * with explicit permissions). Pure: the filesystem is seen through the injected FsView; the homes, the
 * environment and the user's [secrets] setting are given.
 *
 * Hidden means present but empty: a folder gets an empty read-only folder on top (a tmpfs), a file an empty
 * read-only regular file bound over it (gate-sh's own placeholder, `file` below; /dev/null when there is
 * none, which bubblewrap binds `nodev`, so the file then cannot be opened at all). An empty regular file is
 * what tools expect of a config they may read (`npm` with an empty `.npmrc`, `git` with no stored
 * credentials), and a write fails loudly (EROFS), where a writable /dev/null would swallow what a tool
 * means to save. Only locations that exist are masked: a mount needs a mount point, which bubblewrap would
 * make on the host, a trace in the user's home. Every mask is made on the real path, so a symlinked
 * location (`~/.ssh -> /data/keys`) hides its target, and a link into it anywhere reads the mask.
 *
 * A permission profile naming a location (or a path inside one) for reading or writing is a grant: that
 * location (or that path only) is visible in that run; naming a folder above one (`~`) grants nothing of it.
 * Trust boundary: everything inside the sandbox is untrusted; the list is the daemon's configuration and
 * gate-sh's defaults. Not covered: a hard link to a secret file made before the run in a folder the sandbox
 * sees (it is the same file under another name), and danger-full-access (no sandbox: docs/secrets.md).
 */
import { posix } from 'node:path';
import type { FsView } from './fs-view.js';
import { SandboxError } from './errors.js';
import { isWithin, normAbs, seenFromHost as visible, type MountOp } from './mounts.js';
import { npmrcHoldsCredential } from './npmrc.js';

/** The user's change to the credential locations every sandbox hides (config.toml `[secrets]`): `hide`
 * adds `~/path` or `/path` entries, `show` takes defaults away. The wire carries it as WireSecretsSetting,
 * the same shape (pinned in policy.ts). */
export interface SecretsSetting {
  hide?: string[];
  show?: string[];
}

export interface SecretDefault {
  /** as people spell it: from the home folder */
  path: string;
  /** where a variable moves it: `$NAME` (the variable names the location) or `$NAME/rest` */
  moved?: readonly string[];
  /** a settings file hidden only while it holds a credential (its reader: src/sandbox/npmrc.ts) */
  settings?: 'npmrc';
}

/**
 * The credential locations hidden by default. The agents' own: Codex `$CODEX_HOME/auth.json` and
 * `.credentials.json` (MCP OAuth tokens when no keyring), Claude Code `~/.claude/.credentials.json` (Linux)
 * and `~/.claude.json` (`primaryApiKey` after a Console sign-in; `$CLAUDE_CONFIG_DIR` moves both), gemini-cli
 * `~/.gemini/oauth_creds.json`, `mcp-oauth-tokens.json`, `mcp-oauth-tokens-v2.json` (encrypted with a key
 * derived from host and user name: readable by anyone who can read it) and `.env` (API keys), and gcloud's
 * application-default credentials (`~/.config/gcloud`) that gemini-cli's Vertex mode uses.
 */
export const DEFAULT_SECRETS: readonly SecretDefault[] = [
  { path: '~/.ssh' },
  { path: '~/.gnupg', moved: ['$GNUPGHOME'] },
  { path: '~/.aws', moved: ['$AWS_SHARED_CREDENTIALS_FILE', '$AWS_CONFIG_FILE'] },
  { path: '~/.azure', moved: ['$AZURE_CONFIG_DIR'] },
  { path: '~/.config/gcloud', moved: ['$CLOUDSDK_CONFIG', '$XDG_CONFIG_HOME/gcloud'] },
  { path: '~/.kube', moved: ['$KUBECONFIG'] },
  { path: '~/.config/gh', moved: ['$GH_CONFIG_DIR', '$XDG_CONFIG_HOME/gh'] },
  { path: '~/.config/hub', moved: ['$HUB_CONFIG', '$XDG_CONFIG_HOME/hub'] },
  { path: '~/.netrc', moved: ['$NETRC'] },
  { path: '~/.git-credentials' },
  { path: '~/.config/git/credentials', moved: ['$XDG_CONFIG_HOME/git/credentials'] },
  { path: '~/.docker/config.json', moved: ['$DOCKER_CONFIG/config.json'] },
  { path: '~/.npmrc', moved: ['$NPM_CONFIG_USERCONFIG'], settings: 'npmrc' },
  { path: '~/.pypirc' },
  { path: '~/.cargo/credentials', moved: ['$CARGO_HOME/credentials'] },
  { path: '~/.cargo/credentials.toml', moved: ['$CARGO_HOME/credentials.toml'] },
  { path: '~/.gem/credentials' },
  { path: '~/.terraform.d/credentials.tfrc.json' },
  { path: '~/.vault-token' },
  { path: '~/.pgpass', moved: ['$PGPASSFILE'] },
  { path: '~/.my.cnf' },
  { path: '~/.s3cfg' },
  { path: '~/.boto' },
  { path: '~/.config/rclone', moved: ['$XDG_CONFIG_HOME/rclone'] },
  { path: '~/.password-store', moved: ['$PASSWORD_STORE_DIR'] },
  { path: '~/.local/share/keyrings', moved: ['$XDG_DATA_HOME/keyrings'] },
  { path: '~/.env' },
  { path: '~/.codex/auth.json', moved: ['$CODEX_HOME/auth.json'] },
  { path: '~/.codex/.credentials.json', moved: ['$CODEX_HOME/.credentials.json'] },
  { path: '~/.claude/.credentials.json', moved: ['$CLAUDE_CONFIG_DIR/.credentials.json'] },
  { path: '~/.claude.json', moved: ['$CLAUDE_CONFIG_DIR/.claude.json'] },
  { path: '~/.gemini/oauth_creds.json' },
  { path: '~/.gemini/mcp-oauth-tokens.json' },
  { path: '~/.gemini/mcp-oauth-tokens-v2.json' },
  { path: '~/.gemini/.env' },
];

/** Variables holding a `:`-separated list of locations. */
const LIST_VARS = new Set(['KUBECONFIG']);

/**
 * One entry of `[secrets] hide`/`show` (config.toml, GATE_SECRETS_HIDE/SHOW): `~/path` or `/path`, no `..`,
 * not `/` or `~` itself (that would hide everything, or be a folder no run can work in). Returns it
 * normalised; throws a plain Error naming what is wrong (the config layer adds the file and key).
 */
export function checkSecretEntry(p: unknown): string {
  if (typeof p !== 'string' || p.trim() === '') throw new Error(`entries must be non-empty paths, got ${JSON.stringify(p)}`);
  if (!(p.startsWith('/') || p.startsWith('~/'))) throw new Error(`'${p}' must start with '~/' (the home folder) or '/'`);
  if (p.split('/').includes('..')) throw new Error(`'${p}' contains '..': give the path itself`);
  const n = p.startsWith('~/') ? `~/${normAbs(`/${p.slice(2)}`).slice(1)}` : normAbs(p);
  if (n === '/' || n === '~/') throw new Error(`'${p}' would hide ${n === '/' ? 'everything' : 'the whole home folder'}: name the locations`);
  return n;
}

/** `~/x` in each home, or `/x` itself. */
function spelled(p: string, homes: readonly string[]): string[] {
  return p.startsWith('~/') ? homes.map((h) => normAbs(posix.join(h, p.slice(2)))) : [normAbs(p)];
}

/** A `$NAME[/rest]` location under this environment: none when the variable is unset or not absolute. */
function moved(m: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const match = /^\$([A-Z_][A-Z0-9_]*)(\/.*)?$/.exec(m);
  if (!match) return [];
  const value = env[match[1]];
  if (!value) return [];
  const values = LIST_VARS.has(match[1]) ? value.split(':') : [value];
  return values.filter((v) => v.startsWith('/') && !v.split('/').includes('..')).map((v) => normAbs(posix.join(v, match[2] ?? '')));
}

export interface SecretLocationsOptions {
  /** the user's home folders (absolute): $HOME and the password database's, which may differ */
  homes: readonly string[];
  /** the environment the run gets (variables that move a location) */
  env: Readonly<Record<string, string | undefined>>;
  /** the user's [secrets] setting: `show` takes defaults away (a location and everything below it), `hide`
   *  adds (and wins over `show`) */
  setting?: SecretsSetting;
  /** to read a settings file (`~/.npmrc`): one holding no credential is left visible. Without it, every
   *  default is hidden. */
  fs?: FsView;
}

/** Whether a settings location must be hidden now: it holds a credential, or it cannot be read whole. */
function settingsHoldSecret(path: string, fs: FsView): boolean {
  if (fs.kind(path) === null) return true; // missing (asked without realpath's thrown ENOENT): as below
  const real = fs.realpath(path);
  if (real === null) return true; // missing: nothing to mask, and nothing to decide
  if (fs.kind(real) !== 'file') return true;
  const text = fs.readText(real);
  // readText reads the first 4096 characters: a longer file is not read whole, so it is hidden
  if (text === null || text.length >= 4096) return true;
  return npmrcHoldsCredential(text);
}

/** The variables a default's location moves with (`$NAME` in DEFAULT_SECRETS): what secretLocations reads of
 * the environment. */
const MOVING_VARS: readonly string[] = [
  ...new Set(DEFAULT_SECRETS.flatMap((d) => (d.moved ?? []).map((m) => /^\$([A-Z_][A-Z0-9_]*)/.exec(m)?.[1] ?? '')).filter((v) => v !== '')),
];

/** One list of locations before the settings files are read: sorted, and for each whether it is kept only
 * while its settings file holds a credential. */
interface Candidates {
  paths: readonly string[];
  /** a settings default's path (npmrc) that nothing else names: hidden only while it holds a credential */
  readIfSettings: ReadonlySet<string>;
}

/** Candidates by everything they are worked out from (the homes, the moving variables' values, the setting):
 * the same inputs give the same list, so only the settings files are read again at each build. */
const candidateMemo = new Map<string, Candidates>();
const CANDIDATE_MEMO_MAX = 32;

function candidates(homes: readonly string[], env: Readonly<Record<string, string | undefined>>, setting: SecretsSetting | undefined): Candidates {
  const key = JSON.stringify([homes, MOVING_VARS.map((v) => env[v] ?? null), setting?.show ?? null, setting?.hide ?? null]);
  const hit = candidateMemo.get(key);
  if (hit) return hit;
  const shown = (setting?.show ?? []).flatMap((s) => spelled(s, homes));
  const tooWide = (p: string) => p === '/' || homes.some((h) => isWithin(h, p));
  const out = new Set<string>();
  const settings = new Set<string>();
  const always = new Set<string>();
  for (const d of DEFAULT_SECRETS)
    for (const p of [...spelled(d.path, homes), ...(d.moved ?? []).flatMap((m) => moved(m, env))])
      if (!tooWide(p) && !shown.some((s) => isWithin(p, s))) {
        out.add(p);
        (d.settings ? settings : always).add(p);
      }
  // the user's own entries as given (checkSecretEntry refused `/` and `~`): one holding the working folder
  // is refused by the masks with a message, never dropped without a word
  for (const h of setting?.hide ?? [])
    for (const p of spelled(h, homes))
      if (p !== '/') {
        out.add(p);
        always.add(p);
      }
  // each path's depth counted once, not at every comparison
  const depth = new Map([...out].map((p) => [p, p.split('/').length]));
  const paths = [...out].sort((a, b) => depth.get(a)! - depth.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
  const c: Candidates = { paths, readIfSettings: new Set([...settings].filter((p) => !always.has(p))) };
  if (candidateMemo.size >= CANDIDATE_MEMO_MAX) candidateMemo.clear();
  candidateMemo.set(key, c);
  return c;
}

/**
 * The absolute paths to hide, existing or not (the masks look), parents first. A default that would be
 * `/`, a home folder or a folder above one (a variable set to such a value names no credential location)
 * is left out rather than hiding the home. A settings file (`~/.npmrc`) is read at every call; the rest is
 * worked out once per homes, environment and setting (candidates above).
 */
export function secretLocations(o: SecretLocationsOptions): string[] {
  const homes = [...new Set(o.homes.filter((h) => h.startsWith('/')).map(normAbs))];
  const c = candidates(homes, o.env, o.setting);
  const fs = o.fs;
  if (!fs || c.readIfSettings.size === 0) return [...c.paths];
  return c.paths.filter((p) => !c.readIfSettings.has(p) || settingsHoldSecret(p, fs));
}

export interface SecretFound {
  /** the location as listed */
  path: string;
  /** where it really is (a symlinked location's target) */
  real: string;
  kind: 'dir' | 'file';
}

/** The locations that exist (what the masks hide, what `gate explain` lists); dangling symlinks hold nothing. */
export function existingSecrets(locations: readonly string[], fs: FsView): SecretFound[] {
  const out: SecretFound[] = [];
  for (const path of locations) {
    if (fs.kind(path) === null) continue;
    const real = fs.realpath(path);
    if (real === null) continue;
    out.push({ path, real, kind: fs.kind(real) === 'dir' ? 'dir' : 'file' });
  }
  return out;
}

export interface SecretGrants {
  /** real paths a profile names for reading */
  read: readonly string[];
  /** real paths a profile names for writing (bound read-write before the masks) */
  write: readonly string[];
}

export interface SecretAccess {
  /** the secret location opened (as listed) */
  location: string;
  /** the path the profile named (the location itself, or a path inside it) */
  path: string;
  access: 'read' | 'write';
}

/**
 * What of the hidden secrets a profile's named paths open (for the prompt: "reads a hidden secret
 * location"): each named path that is a location or lies inside one. Paths are real paths.
 */
export function secretAccess(found: readonly SecretFound[], grants: SecretGrants): SecretAccess[] {
  const out: SecretAccess[] = [];
  for (const [access, paths] of [['write', grants.write], ['read', grants.read]] as const)
    for (const path of paths) {
      const s = found.find((f) => isWithin(path, f.real));
      if (s && !out.some((o) => o.path === path)) out.push({ location: s.path, path, access });
    }
  return out;
}

export interface SecretMaskOptions {
  /** an empty read-only regular file of gate-sh's own, bound over hidden files; default /dev/null */
  file?: string;
  /** a profile's named paths: granted, so visible (write paths stay writable) */
  grants?: SecretGrants;
  /** the run's own folders (the cwd, writable roots): a hidden folder holding one is refused */
  own?: readonly string[];
}


/**
 * The masks, given every mount before them: after the writable binds and protected paths (a mask inside a
 * writable root must lie on top), before the path-socket masks (a socket inside a hidden folder, gpg-agent's
 * or an ssh control socket, is gone with it) and the request folder.
 */
export function secretMasks(locations: readonly string[], before: readonly MountOp[], fs: FsView, o: SecretMaskOptions = {}): MountOp[] {
  const ops: MountOp[] = [...before];
  const grants = o.grants ?? { read: [], write: [] };
  const named = [...grants.write.map((p) => ({ p, write: true })), ...grants.read.map((p) => ({ p, write: false }))];
  const own = (o.own ?? []).map((p) => fs.realpath(p) ?? normAbs(p));
  const masked = new Set<string>();
  for (const s of existingSecrets(locations, fs)) {
    if (masked.has(s.real) || s.real === '/') continue;
    // granted as a whole: visible in this run (a write grant was bound read-write before)
    if (named.some((n) => n.p === s.real)) continue;
    if (!visible(ops, s.real)) continue; // not seen anyway (under a hidden folder, or outside a profile's reads)
    if (s.kind === 'dir') {
      const inside = own.find((w) => isWithin(w, s.real));
      if (inside)
        throw new SandboxError(
          `the folder ${inside} lies inside the secret location ${s.path}, which every sandbox hides: work elsewhere, or take it off the list ([secrets] show in config.toml)`,
        );
      ops.push({ op: 'empty-ro', dest: s.real });
    } else ops.push({ op: 'ro-bind', src: o.file ?? '/dev/null', dest: s.real });
    masked.add(s.real);
    // a path granted inside it: only that path comes back (mount points in the empty folder are in memory)
    for (const n of named)
      if (n.p !== s.real && isWithin(n.p, s.real) && fs.kind(n.p) !== null) ops.push({ op: n.write ? 'bind' : 'ro-bind', src: n.p, dest: n.p });
  }
  return ops.slice(before.length);
}
