/**
 * GateConfig: the session configuration the daemon runs with. Pure: validation and merging of values that
 * came from config.toml, the environment, daemon flags, or a run-time `gate config set`. Codex key names
 * where Codex has one (approval_policy, sandbox_mode, [sandbox_workspace_write]).
 */
import { type ApprovalPolicy, parseApprovalPolicy } from '../decide/index.js';
import { checkSecretEntry, parseSandboxPolicy, type SandboxMode, type SandboxPolicy, type SecretsSetting, workspaceWrite } from '../sandbox/index.js';
import { NO_NETWORK_LISTS, type NetworkLists } from '../decide/index.js';
import { networkListsFromTable, networkListsView } from './network.js';

export interface GateConfig {
  approval_policy: ApprovalPolicy;
  /** the turn sandbox; workspace-write's workspace is each run's cwd (plus writable_roots) */
  sandbox_policy: SandboxPolicy;
  autostart: boolean;
  /** how long a prompt waits for an answer when an approver is attached */
  approval_timeout_ms: number;
  /** extra rule files, loaded after the default rule folders */
  rules: string[];
  git_read_only: boolean;
  /** audit log path; undefined = the default ($GATE_HOME/audit.jsonl) */
  audit_log?: string;
  /** advisory risk assessor run for each prompt: argv, or a string run by /bin/sh -c (src/daemon/risk-assessor.ts) */
  risk_assessor?: string | string[];
  /** `[network] allowed_domains / denied_domains` (src/config/network.ts): hosts a run's proxy lets through or refuses */
  network_domains: NetworkLists;
  /** [secrets]: the credential locations every sandbox hides, changed (src/sandbox/secrets.ts) */
  secrets?: SecretsSetting;
}

export const DEFAULT_CONFIG: GateConfig = {
  approval_policy: 'on-request',
  sandbox_policy: workspaceWrite(),
  autostart: true,
  approval_timeout_ms: 120_000,
  rules: [],
  git_read_only: false,
  network_domains: NO_NETWORK_LISTS,
};

/** A bad value, named by where it came from (file, env variable or flag) and its key. */
export class ConfigError extends Error {}

/** The keys config.toml may set (`gate init` writes each one, commented out: src/config/commented.ts). */
export const TOP_KEYS = new Set([
  'approval_policy',
  'sandbox_mode',
  'sandbox_workspace_write',
  'autostart',
  'approval_timeout_ms',
  'rules',
  'git_read_only',
  'audit_log',
  'risk_assessor',
  'network',
  'secrets',
]);
/** The keys of its [sandbox_workspace_write] table. */
export const WW_KEYS = new Set(['writable_roots', 'agent_writable_roots', 'network_access', 'exclude_tmpdir_env_var', 'exclude_slash_tmp']);

/** A raw table (from TOML) → the keys it sets, validated. `where` names the file for messages. */
export function configFromTable(t: Record<string, unknown>, where: string, base: GateConfig = DEFAULT_CONFIG): GateConfig {
  for (const k of Object.keys(t)) if (!TOP_KEYS.has(k)) throw new ConfigError(`${where}: unknown key '${k}'`);
  const out: GateConfig = { ...base };
  if (t.approval_policy !== undefined) out.approval_policy = wrap(where, 'approval_policy', () => parseApprovalPolicy(t.approval_policy));
  const ww = t.sandbox_workspace_write;
  if (ww !== undefined) {
    if (!isTable(ww)) throw new ConfigError(`${where}: 'sandbox_workspace_write' must be a table`);
    for (const k of Object.keys(ww)) if (!WW_KEYS.has(k)) throw new ConfigError(`${where}: unknown key 'sandbox_workspace_write.${k}'`);
  }
  const mode = t.sandbox_mode;
  if (mode !== undefined || ww !== undefined) {
    const m = mode ?? base.sandbox_policy.type;
    out.sandbox_policy = wrap(where, mode !== undefined ? 'sandbox_mode' : 'sandbox_workspace_write', () =>
      parseSandboxPolicy(m === 'workspace-write' ? { type: m, ...(isTable(ww) ? ww : {}) } : m),
    );
  }
  if (t.autostart !== undefined) out.autostart = bool(where, 'autostart', t.autostart);
  if (t.approval_timeout_ms !== undefined) out.approval_timeout_ms = timeout(where, 'approval_timeout_ms', t.approval_timeout_ms);
  if (t.rules !== undefined) {
    if (!Array.isArray(t.rules) || t.rules.some((r) => typeof r !== 'string' || r === ''))
      throw new ConfigError(`${where}: 'rules' must be a list of file paths`);
    out.rules = t.rules as string[];
  }
  if (t.git_read_only !== undefined) out.git_read_only = bool(where, 'git_read_only', t.git_read_only);
  if (t.audit_log !== undefined) {
    if (typeof t.audit_log !== 'string' || t.audit_log === '') throw new ConfigError(`${where}: 'audit_log' must be a file path`);
    out.audit_log = t.audit_log;
  }
  if (t.risk_assessor !== undefined) {
    const r = t.risk_assessor;
    const argv = Array.isArray(r) && r.length > 0 && r.every((w) => typeof w === 'string') && r[0] !== '';
    if (!(typeof r === 'string' && r.trim() !== '') && !argv)
      throw new ConfigError(`${where}: 'risk_assessor' must be a command string or a non-empty list of strings (argv)`);
    out.risk_assessor = r as string | string[];
  }
  if (t.network !== undefined) out.network_domains = wrapBare(where, () => networkListsFromTable(t.network));
  if (t.secrets !== undefined) out.secrets = secretsTable(where, t.secrets, base.secrets);
  return out;
}

/** `[secrets]`: `hide` and `show`, lists of `~/path` or `/path` (checkSecretEntry); each list replaces the
 * one set before it (the file's, then a variable's). */
function secretsTable(where: string, v: unknown, base: SecretsSetting | undefined): SecretsSetting | undefined {
  if (!isTable(v)) throw new ConfigError(`${where}: 'secrets' must be a table (hide = [...], show = [...])`);
  let out = base;
  for (const k of Object.keys(v)) {
    if (k !== 'hide' && k !== 'show') throw new ConfigError(`${where}: unknown key 'secrets.${k}' (hide, show)`);
    if (!Array.isArray(v[k])) throw new ConfigError(`${where}: 'secrets.${k}' must be a list of paths`);
    out = withSecrets(out, k, v[k] as unknown[], where);
  }
  return out;
}

function withSecrets(base: SecretsSetting | undefined, key: 'hide' | 'show', list: readonly unknown[], where: string): SecretsSetting | undefined {
  const paths = list.map((p) => wrap(where, `secrets.${key}`, () => checkSecretEntry(p)));
  const out: SecretsSetting = { ...base, [key]: [...new Set(paths)] };
  if (!out.hide?.length) delete out.hide;
  if (!out.show?.length) delete out.show;
  return out.hide || out.show ? out : undefined;
}

/** Environment overrides: GATE_APPROVAL_POLICY, GATE_SANDBOX_MODE, GATE_APPROVAL_TIMEOUT_MS, GATE_AUTOSTART,
 * GATE_RULES (':'-separated), GATE_GIT_READ_ONLY, GATE_AUDIT_LOG,
 * GATE_SECRETS_HIDE / GATE_SECRETS_SHOW (each a `:`-separated list replacing its [secrets] list). */
export function configFromEnv(env: Record<string, string | undefined>, base: GateConfig): GateConfig {
  let out = base;
  for (const [name, key] of ENV_KEYS) {
    const v = env[name];
    if (v === undefined || v === '') continue;
    out = setConfigValue(out, key, v, `environment variable ${name}`);
  }
  return out;
}

const ENV_KEYS: [string, string][] = [
  ['GATE_APPROVAL_POLICY', 'approval_policy'],
  ['GATE_SANDBOX_MODE', 'sandbox_mode'],
  ['GATE_APPROVAL_TIMEOUT_MS', 'approval_timeout_ms'],
  ['GATE_AUTOSTART', 'autostart'],
  ['GATE_RULES', 'rules'],
  ['GATE_GIT_READ_ONLY', 'git_read_only'],
  ['GATE_AUDIT_LOG', 'audit_log'],
  ['GATE_SECRETS_HIDE', 'secrets.hide'],
  ['GATE_SECRETS_SHOW', 'secrets.show'],
];

/** Keys a string value can set (env, flags, `gate config set`). */
export const SETTABLE_KEYS = [
  'approval_policy',
  'sandbox_mode',
  'sandbox_workspace_write.writable_roots',
  'sandbox_workspace_write.agent_writable_roots',
  'sandbox_workspace_write.network_access',
  'sandbox_workspace_write.exclude_tmpdir_env_var',
  'sandbox_workspace_write.exclude_slash_tmp',
  'approval_timeout_ms',
  'autostart',
  'rules',
  'git_read_only',
  'audit_log',
  'secrets.hide',
  'secrets.show',
] as const;

/** Set one key from a string (JSON accepted for tables, e.g. approval_policy '{"reject":{...}}'). */
export function setConfigValue(base: GateConfig, key: string, raw: string, where: string): GateConfig {
  const v = raw.trim();
  switch (key) {
    case 'approval_policy':
      return { ...base, approval_policy: wrap(where, key, () => parseApprovalPolicy(v.startsWith('{') ? parseJson(where, key, v) : v)) };
    case 'sandbox_mode': {
      const parsed = v.startsWith('{') ? parseJson(where, key, v) : v;
      return { ...base, sandbox_policy: wrap(where, key, () => parseSandboxPolicy(parsed)) };
    }
    case 'approval_timeout_ms':
      return { ...base, approval_timeout_ms: timeout(where, key, Number(v)) };
    case 'autostart':
    case 'git_read_only':
      return { ...base, [key]: boolString(where, key, v) };
    case 'rules':
      return { ...base, rules: v.split(':').filter((s) => s !== '') };
    case 'audit_log':
      return { ...base, audit_log: v };
    case 'secrets.hide':
    case 'secrets.show': {
      // ':'-separated as GATE_RULES, or a JSON list
      const k = key === 'secrets.hide' ? 'hide' : 'show';
      return { ...base, secrets: withSecrets(base.secrets, k, wrap(where, key, () => listString(v)), where) };
    }
  }
  const ww = /^sandbox_workspace_write\.(.+)$/.exec(key)?.[1];
  if (ww !== undefined && WW_KEYS.has(ww)) return { ...base, sandbox_policy: wrap(where, key, () => withWorkspaceKey(base.sandbox_policy, ww, v)) };
  throw new ConfigError(`${where}: unknown or read-only key '${key}' (settable: ${SETTABLE_KEYS.join(', ')})`);
}

/** One key of [sandbox_workspace_write] set from a string: only while the mode is workspace-write (elsewhere
 * the table is not in force, and setting it would change nothing a run gets). */
function withWorkspaceKey(policy: SandboxPolicy, key: string, v: string): SandboxPolicy {
  if (policy.type !== 'workspace-write')
    throw new Error(`applies only to sandbox_mode workspace-write, and sandbox_mode is ${policy.type} (set sandbox_mode first)`);
  let value: unknown;
  if (key === 'writable_roots' || key === 'agent_writable_roots') value = listString(v);
  else if (key === 'network_access' && v === 'rules') value = v;
  else if (/^(1|true|yes|on)$/i.test(v)) value = true;
  else if (/^(0|false|no|off)$/i.test(v)) value = false;
  else throw new Error(`must be true or false${key === 'network_access' ? ' or rules' : ''}, not '${v}'`);
  return parseSandboxPolicy({ ...policy, [key]: value });
}

/** A list of paths from a string: JSON (`["/a","/b"]`) or `:`-separated, as GATE_RULES. */
function listString(v: string): string[] {
  if (!v.startsWith('[')) return v.split(':').filter((s) => s !== '');
  const list = JSON.parse(v) as unknown;
  if (!Array.isArray(list) || list.some((p) => typeof p !== 'string')) throw new Error('must be a list of paths');
  return list as string[];
}

/** The config as Codex-style keys (what `gate config get` shows). */
export function configView(c: GateConfig): Record<string, unknown> {
  const sp = c.sandbox_policy;
  const view: Record<string, unknown> = {
    approval_policy: c.approval_policy,
    sandbox_mode: sp.type as SandboxMode,
  };
  if (sp.type === 'workspace-write') {
    const { type: _t, ...rest } = sp;
    view.sandbox_workspace_write = rest;
  }
  if (sp.type === 'external-sandbox') view.sandbox_external = { network_access: sp.network_access };
  Object.assign(view, {
    autostart: c.autostart,
    approval_timeout_ms: c.approval_timeout_ms,
    rules: c.rules,
    git_read_only: c.git_read_only,
  });
  if (c.audit_log !== undefined) view.audit_log = c.audit_log;
  if (c.risk_assessor !== undefined) view.risk_assessor = c.risk_assessor;
  const network = networkListsView(c.network_domains);
  if (network) view.network = network;
  if (c.secrets !== undefined) view.secrets = c.secrets;
  return view;
}

function isTable(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date);
}

function wrap<T>(where: string, key: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new ConfigError(`${where}: '${key}': ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** As wrap, for messages that name their key themselves. */
function wrapBare<T>(where: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new ConfigError(`${where}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function parseJson(where: string, key: string, v: string): unknown {
  return wrap(where, key, () => JSON.parse(v) as unknown);
}

function bool(where: string, key: string, v: unknown): boolean {
  if (typeof v !== 'boolean') throw new ConfigError(`${where}: '${key}' must be true or false`);
  return v;
}

function boolString(where: string, key: string, v: string): boolean {
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new ConfigError(`${where}: '${key}' must be true or false, not '${v}'`);
}

function timeout(where: string, key: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 86_400_000)
    throw new ConfigError(`${where}: '${key}' must be a whole number of milliseconds between 0 and 86400000`);
  return v;
}

/**
 * The settings a gate-sh caller's environment asks for, which a running daemon must either apply or refuse
 * (settings are what the user asked: a stricter one is applied or the call refused, never ignored): name → raw
 * value, only those set and not empty.
 */
export const CALLER_SETTINGS: readonly (readonly [string, 'sandbox_mode' | 'approval_policy' | 'secrets.hide' | 'secrets.show'])[] = [
  ['GATE_SANDBOX_MODE', 'sandbox_mode'],
  ['GATE_APPROVAL_POLICY', 'approval_policy'],
  ['GATE_SECRETS_HIDE', 'secrets.hide'],
  ['GATE_SECRETS_SHOW', 'secrets.show'],
];

export function callerSettings(env: Record<string, string | undefined>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const [name] of CALLER_SETTINGS) {
    const v = env[name];
    if (v !== undefined && v.trim() !== '') (out ??= {})[name] = v;
  }
  return out;
}

/**
 * Why a caller's settings cannot run under this daemon's configuration, or undefined when they agree. One
 * truth about the settings in force: a call never runs under a sandbox or approval policy other than the
 * one its caller named (stricter or looser), and a value that is not one is refused, not ignored. A plain
 * sandbox mode is compared by its type (the daemon's writable roots come from config.toml); a JSON one whole.
 */
export function settingsConflict(config: GateConfig, asked: Record<string, unknown>, session: string): string | undefined {
  for (const [name, key] of CALLER_SETTINGS) {
    const raw = asked[name];
    if (raw === undefined) continue;
    if (typeof raw !== 'string') return `${name} must be a string`;
    let wanted: GateConfig;
    try {
      wanted = setConfigValue(DEFAULT_CONFIG, key, raw, `${name}=${raw}`);
    } catch (e) {
      return `${(e as Error).message}; fix or unset ${name}`;
    }
    const json = raw.trim().startsWith('{');
    const pick = (c: GateConfig): unknown =>
      key === 'sandbox_mode' ? c.sandbox_policy : key === 'approval_policy' ? c.approval_policy : [...(c.secrets?.[key === 'secrets.hide' ? 'hide' : 'show'] ?? [])].sort();
    const has = pick(config);
    const want = pick(wanted);
    const same =
      key === 'sandbox_mode' && !json ? config.sandbox_policy.type === wanted.sandbox_policy.type : JSON.stringify(has) === JSON.stringify(want);
    if (same) continue;
    const shown = (v: unknown): string => (typeof v === 'string' ? v : key === 'sandbox_mode' && !json ? (v as SandboxPolicy).type : JSON.stringify(v));
    return (
      `${name}=${raw} asks for ${key} ${shown(want)}, but the gate daemon of session '${session}' runs with ${key} ${shown(has)}: ` +
      `unset ${name} to run under the daemon's, or change the daemon ('gate config set ${key} ${raw}', until it stops; or ` +
      `'gate daemon restart' with ${name} set), or use a daemon of its own (GATE_SESSION=<name>)`
    );
  }
  return undefined;
}
