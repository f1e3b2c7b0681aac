/**
 * `gate doctor`: per agent found on this machine (or set up by `gate setup`), whether gate-sh is wired in
 * and whether the agent would really use it, by the agent's own selection rule (agents.ts), so a silent
 * fallback to the plain bash is caught and said loudly. Reads files and the environment; changes nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { parse as parseToml } from 'smol-toml';
import { codexHome, type Env, homeDir } from '../../paths/index.js';
import { AGENTS, claudeShell, codexShell, geminiShell, HOOK_REWRITE, hookCommand, settingsFile, type AgentId, type Probe, type ShellChoice } from './agents.js';
import { fsProbe, isGateShEntry } from './entry.js';
import { install, readRecord } from './setup.js';

export type RouteState = 'wired' | 'not-wired' | 'broken';

export interface RouteReport {
  route: 'shell' | 'hook' | 'mcp';
  state: RouteState;
  detail: string;
}

export interface AgentReport {
  agent: AgentId;
  title: string;
  /** the agent's program on PATH, if any */
  found?: string;
  setUp: boolean;
  routes: RouteReport[];
  /** gate-sh gates this agent's commands by at least one route */
  gated: boolean;
  warnings: string[];
}

export const probe: Probe = fsProbe;

function readJson(file: string): Record<string, any> {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

export function diagnose(env: Env): AgentReport[] {
  const inst = install(env);
  const homes = { home: homeDir(env), codexHome: codexHome(env) };
  const out: AgentReport[] = [];
  for (const id of Object.keys(AGENTS) as AgentId[]) {
    const a = AGENTS[id];
    const found = probe.which(a.bin, env.PATH);
    const rec = readRecord(env, id);
    const file = settingsFile(id, env, homes);
    const r: AgentReport = { agent: id, title: a.title, ...(found ? { found } : {}), setUp: rec !== undefined, routes: [], gated: false, warnings: [] };
    const shellRoute = (choice: ShellChoice, wiredWhere: string): RouteReport => {
      const gated = choice.shell !== '' && isGateShEntry(choice.shell, inst);
      if (choice.ignored)
        r.warnings.push(`${a.title} IGNORES gate-sh: ${choice.ignored}; it runs ${choice.shell || 'no shell'} instead and its commands are NOT gated`);
      return {
        route: 'shell',
        state: gated ? 'wired' : choice.ignored || rec?.routes.includes('shell') ? 'broken' : 'not-wired',
        detail: `${choice.why}${gated ? ' → gate-sh' : ` → not gate-sh${wiredWhere}`}`,
      };
    };
    if (id === 'claude-code') {
      const s = readJson(file);
      const senv = s.env && typeof s.env === 'object' ? (s.env as Record<string, unknown>) : {};
      r.routes.push(shellRoute(claudeShell(env, senv, probe), ` (gate setup claude-code sets env.CLAUDE_CODE_SHELL in ${file})`));
      r.routes.push(hookRoute('claude-code', s.hooks?.PreToolUse, 'Bash', hookCommand('claude-code', inst), file));
    } else if (id === 'gemini') {
      const dir = join(inst.entry, '..');
      const here = geminiShell(env, probe);
      // as README.md says to start it for the shell route: PATH=~/.gate-sh/bin:$PATH gemini (an alias)
      const aliased = geminiShell({ ...env, PATH: `${dir}:${env.PATH ?? ''}` }, probe);
      const byAlias = !isGateShEntry(here.shell, inst) && rec?.routes.includes('shell') && isGateShEntry(aliased.shell, inst);
      if (byAlias)
        r.routes.push({
          route: 'shell',
          state: 'wired',
          detail: `when started as README.md says (PATH=${dir}:$PATH gemini) it runs ${aliased.shell} → gate-sh; started plainly from this shell it would find ${here.shell || 'no bash'}: keep the alias (e.g. in ~/.bashrc: alias gemini='PATH=${dir}:$PATH gemini')`,
        });
      else r.routes.push(shellRoute(here, ` (start gemini with PATH=${dir}:$PATH, e.g. alias gemini='PATH=${dir}:$PATH gemini'; gate setup gemini --route shell writes ${inst.entry})`));
      r.routes.push(hookRoute('gemini', readJson(file).hooks?.BeforeTool, 'run_shell_command', hookCommand('gemini', inst), file));
    } else {
      let login = '';
      try {
        login = userInfo().shell ?? '';
      } catch {
        // no password entry
      }
      const choice = codexShell(login);
      const gated = isGateShEntry(choice.shell, inst);
      r.routes.push({
        route: 'shell',
        state: gated ? 'wired' : 'not-wired',
        detail: `${choice.why}${gated ? ' → gate-sh' : ' → not gate-sh (changing the login shell needs root; use the MCP route)'}`,
      });
      let cfg: Record<string, any> = {};
      try {
        cfg = parseToml(readFileSync(file, 'utf8')) as Record<string, any>;
      } catch {
        // missing or unreadable: not wired
      }
      const mcp = cfg.mcp_servers?.gate;
      const mcpOk = mcp && mcp.command === inst.node && Array.isArray(mcp.args) && mcp.args[0] === inst.gate && mcp.args[1] === 'mcp';
      const builtinOff = cfg.features?.shell_tool === false;
      const state: RouteState = mcpOk && builtinOff ? 'wired' : mcpOk || rec ? 'broken' : 'not-wired';
      r.routes.push({
        route: 'mcp',
        state,
        detail: mcpOk
          ? `[mcp_servers.gate] runs gate mcp${builtinOff ? '; the built-in shell tool is off' : '; but the built-in shell tool is ON: Codex may run commands without gate-sh'}`
          : `no [mcp_servers.gate] in ${file} (gate setup codex adds it)`,
      });
      if (state === 'broken') r.warnings.push(`Codex can run commands WITHOUT gate-sh: ${r.routes[1].detail}`);
    }
    r.gated = r.routes.some((x) => x.state === 'wired');
    if (rec && !r.gated) r.warnings.push(`${a.title} was set up (${rec.routes.join('+')}) but would NOT use gate-sh now`);
    if (!rec && found && !r.gated) r.warnings.push(`${a.title} is on PATH (${found}) and its commands are NOT gated: run gate setup ${id}`);
    if (found || rec || r.gated) out.push(r);
  }
  return out;
}

function hookRoute(id: 'claude-code' | 'gemini', groups: unknown, matcher: string, command: string, file: string): RouteReport {
  const list = Array.isArray(groups) ? groups : [];
  const ours = list.find((g) => g && typeof g === 'object' && Array.isArray(g.hooks) && g.hooks.some((h: any) => h && h.command === command));
  if (!ours) return { route: 'hook', state: 'not-wired', detail: `no gate-sh hook in ${file} (gate setup ${id} --route hook adds it)` };
  const m = typeof ours.matcher === 'string' ? ours.matcher : '';
  let matches = m === '' || m === '*';
  try {
    matches ||= new RegExp(`^(?:${m})$`).test(matcher);
  } catch {
    // an invalid matcher matches nothing
  }
  return matches
    ? {
        route: 'hook',
        state: 'wired',
        detail: `the hook runs '${command}' for ${matcher}; it rewrites each command to run through gate-sh (${HOOK_REWRITE[id]}): sandboxed, exec-gated, audited`,
      }
    : { route: 'hook', state: 'broken', detail: `the gate-sh hook's matcher '${m}' does not match ${matcher} (gate setup ${id} --route hook writes it again)` };
}

export function formatDoctor(reports: AgentReport[]): string {
  if (reports.length === 0) return 'no agent found on PATH (claude, gemini, codex) and none set up\n';
  const lines: string[] = [];
  for (const r of reports) {
    lines.push(`${r.title}${r.found ? ` (${r.found})` : ' (not on PATH)'}: ${r.gated ? 'gated by gate-sh' : 'NOT gated by gate-sh'}`);
    for (const x of r.routes) lines.push(`  ${x.route.padEnd(5)} ${x.state.padEnd(9)} ${x.detail}`);
    for (const w of r.warnings) lines.push(`  WARNING: ${w}`);
    if (!r.gated && !r.setUp) lines.push(`  to wire it: gate setup ${r.agent}`);
  }
  return lines.join('\n') + '\n';
}

/** The few lines `gate status` shows: per agent, gated or not, by which route, and any warning. */
export function formatAgentSummary(reports: AgentReport[]): string {
  if (reports.length === 0) return '';
  const lines = ['agents (details: gate doctor):'];
  for (const r of reports) {
    const wired = r.routes.filter((x) => x.state === 'wired').map((x) => x.route);
    lines.push(`  ${r.title}: ${r.gated ? `gated (${wired.join(', ')})` : 'NOT gated'}`);
    for (const w of r.warnings) lines.push(`    WARNING: ${w}`);
  }
  return lines.join('\n') + '\n';
}
