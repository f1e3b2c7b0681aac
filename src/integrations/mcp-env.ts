/**
 * The environment `gate mcp` runs its calls with: the user's, as the host (Codex) was started with it, not
 * the short one the host starts MCP servers with (Codex keeps a few variables, HOME, PATH, LANG, ..., plus
 * its `env_vars`: VIRTUAL_ENV, NODE_OPTIONS, PYENV_ROOT, SSL_CERT_DIR and the rest were lost, where the
 * host's own shell tool would have had them). It is read from the host process (/proc/<ppid>/environ: the
 * environment it was started with), under gate mcp's own variables, which win. Dropped from the host's:
 * the variables that say where gate-sh's daemon, rules and session are (GATE_*, XDG_RUNTIME_DIR, HOME,
 * CODEX_HOME): they come from gate mcp's own environment, present or absent, so its calls meet the same
 * daemon as its approver. Pure but for hostEnvironment (a /proc read). Trust: the host is the agent that
 * started gate mcp, as trusted as gate mcp's own environment; nothing here comes from a gated run.
 */
import { readFileSync } from 'node:fs';

/** Where gate-sh finds its daemon, rules and session (src/paths/paths.ts): never taken from the host. */
export function gateLocating(name: string): boolean {
  return name.startsWith('GATE_') || name === 'XDG_RUNTIME_DIR' || name === 'HOME' || name === 'CODEX_HOME';
}

export interface CallEnvironment {
  env: Record<string, string>;
  /** names the host had and gate mcp's own environment lacked: now in the calls' environment */
  added: string[];
  /** names the host had that the calls do not get, and why */
  dropped: { name: string; why: string }[];
  /** where the host's environment came from, or why it could not be read */
  source: string;
}

/** The calls' environment from gate mcp's own and the host's (undefined: unreadable, `why`). Pure. */
export function callEnvironment(own: NodeJS.ProcessEnv, host: Record<string, string> | undefined, source: string): CallEnvironment {
  const env: Record<string, string> = {};
  const added: string[] = [];
  const dropped: { name: string; why: string }[] = [];
  for (const [k, v] of Object.entries(host ?? {})) {
    if (k in own) continue;
    if (gateLocating(k)) {
      dropped.push({ name: k, why: "it says where gate-sh's daemon and rules are: gate mcp's own environment decides that" });
      continue;
    }
    env[k] = v;
    added.push(k);
  }
  for (const [k, v] of Object.entries(own)) if (v !== undefined) env[k] = v;
  return { env, added: added.sort(), dropped, source };
}

/** The environment the process `pid` was started with (NUL-separated K=V), or why it cannot be read. */
export function hostEnvironment(pid: number): { env?: Record<string, string>; source: string } {
  const file = `/proc/${pid}/environ`;
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (e) {
    return { source: `${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}): the calls have gate mcp's own environment only` };
  }
  const env: Record<string, string> = {};
  for (const kv of raw.split('\0')) {
    const eq = kv.indexOf('=');
    if (eq > 0) env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return { env, source: file };
}

/** One log line: what the calls' environment is made of. */
export function describeCallEnvironment(c: CallEnvironment): string {
  const names = (xs: string[]): string => xs.join(', ');
  const parts = [`calls run with the host's environment (${c.source}) under gate mcp's own`];
  parts.push(c.added.length ? `added from the host: ${names(c.added)}` : 'nothing added from the host');
  if (c.dropped.length) {
    const byWhy = new Map<string, string[]>();
    for (const d of c.dropped) byWhy.set(d.why, [...(byWhy.get(d.why) ?? []), d.name]);
    for (const [why, ns] of byWhy) parts.push(`dropped ${names(ns)}: ${why}`);
  }
  return parts.join('; ');
}
