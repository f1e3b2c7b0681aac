/**
 * The environment of an escalated run. The shim sends the exec's environment with its descriptors; the
 * decision was made on the code-loading variables the exec request reported. Anything code-loading that
 * differs from what was decided is put back to the decided value, or dropped (PATH falls back to the
 * daemon's own): an escalated run is never more than what was approved. The configuration folders are the
 * user's own (HOME, XDG_*: the daemon's), and git's variables are dropped but for identity and harmless ones:
 * `HOME=ws/h git status` would otherwise read a config the sandbox wrote, outside it.
 * Pure.
 */
import { codeLoadingVariables, isSafeValue } from '../heuristics/index.js';

/** Where programs read their configuration: always the user's own (the daemon's environment) when escalated. */
export const USER_CONFIG_VARIABLES = ['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_CONFIG_DIRS', 'XDG_DATA_DIRS'];
/** git's variables an escalated run keeps: who commits and when, and switches that run nothing. */
const GIT_KEPT = /^GIT_((AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)|TERMINAL_PROMPT|OPTIONAL_LOCKS|FLUSH|MERGE_AUTOEDIT|ADVICE)$/;

export interface EscalationEnvInput {
  /** "NAME=value" entries as the shim sent them */
  sent: readonly string[];
  /** the code-loading variables the decision saw (ExecRequest.env); absent = none */
  decided?: Readonly<Record<string, string>>;
  /** libgate.so: the gate's own LD_PRELOAD entry, never counted as foreign */
  lib: string;
  /** a sanitizer test build's runtime, the gate's own entry before lib (exec/preload-first.ts) */
  libFirst?: string;
  /** fallback PATH when the decision saw none (the daemon's own) */
  fallbackPath: string;
  /** the daemon's environment: HOME and XDG_* are taken from it (absent: the sent ones stay, as before) */
  user?: Readonly<Record<string, string | undefined>>;
}

export interface EscalationEnv {
  env: Record<string, string>;
  /** names that were changed or dropped, for the log and the audit record */
  corrected: string[];
}

export function escalationEnv(i: EscalationEnvInput): EscalationEnv {
  const env: Record<string, string> = {};
  for (const e of i.sent) {
    const eq = e.indexOf('=');
    if (eq <= 0) continue;
    const name = e.slice(0, eq);
    if (name.startsWith('GATE_')) continue; // the gate's own are set by the runner
    env[name] = e.slice(eq + 1);
  }
  if (env.LD_PRELOAD !== undefined) {
    const rest = env.LD_PRELOAD.split(/[: ]/).filter((x) => x !== '' && x !== i.lib && x !== i.libFirst);
    if (rest.length) env.LD_PRELOAD = rest.join(':');
    else delete env.LD_PRELOAD;
  }
  const decided = i.decided ?? {};
  const corrected: string[] = [];
  if (i.user) {
    for (const name of USER_CONFIG_VARIABLES) {
      const own = i.user[name];
      if (env[name] === own) continue;
      corrected.push(name);
      if (own === undefined) delete env[name];
      else env[name] = own;
    }
    for (const name of Object.keys(env)) {
      if (!name.startsWith('GIT_') || GIT_KEPT.test(name) || isSafeValue(name, env[name]) || decided[name] === env[name]) continue;
      corrected.push(name);
      delete env[name];
    }
  }
  for (const v of codeLoadingVariables(env)) {
    if (decided[v.name] === v.value) continue;
    corrected.push(v.name);
    if (decided[v.name] !== undefined) env[v.name] = decided[v.name];
    else if (v.name === 'PATH') env.PATH = i.fallbackPath;
    else delete env[v.name];
  }
  return { env, corrected };
}
