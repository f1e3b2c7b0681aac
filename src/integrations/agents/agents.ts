/**
 * The agents gate-sh knows how to wire, and how each one really picks its shell (read from their code:
 * Claude Code 2.1.197, gemini-cli 0.61.0, Codex 0.169.0). Pure: file contents and the environment come
 * in as arguments, a plan or a diagnosis goes out; src/integrations/agents/setup.ts touches the disk.
 *
 * - Claude Code runs `<shell> -c [-l] '<wrapper>'` where <shell> is CLAUDE_CODE_SHELL (settings.json `env`
 *   wins over the process environment) only if that path contains "bash" or "zsh" and is executable;
 *   otherwise, silently, SHELL under the same test, then zsh/bash from PATH and the usual folders.
 * - gemini-cli runs `bash -c '<wrapper>'`, `bash` resolved on its own PATH; nothing in its settings names
 *   the shell, so the shell route is a PATH entry; its BeforeTool hook is configured in settings.json.
 * - Codex runs the login shell from the password database (changing it needs root); its route without
 *   root is MCP (`gate mcp`) with its own shell tool turned off (`features.shell_tool = false`).
 */
import { join } from 'node:path';
import type { Env } from '../../paths/index.js';
import type { JsonEdit } from './json-edit.js';
import { shellCommand } from '../../text/index.js';

export type AgentId = 'claude-code' | 'codex' | 'gemini';
export type Route = 'shell' | 'hook' | 'mcp';

export interface Agent {
  id: AgentId;
  title: string;
  /** the agent's command name (found on PATH = the agent is on this machine) */
  bin: string;
  routes: readonly Route[];
  defaultRoutes: readonly Route[];
}

export const AGENTS: Record<AgentId, Agent> = {
  'claude-code': { id: 'claude-code', title: 'Claude Code', bin: 'claude', routes: ['shell', 'hook'], defaultRoutes: ['shell'] },
  gemini: { id: 'gemini', title: 'gemini-cli', bin: 'gemini', routes: ['shell', 'hook'], defaultRoutes: ['hook', 'shell'] },
  codex: { id: 'codex', title: 'Codex CLI', bin: 'codex', routes: ['mcp'], defaultRoutes: ['mcp'] },
};

export function agentId(name: string): AgentId | undefined {
  const aliases: Record<string, AgentId> = { 'claude-code': 'claude-code', claude: 'claude-code', codex: 'codex', gemini: 'gemini', 'gemini-cli': 'gemini' };
  return Object.hasOwn(aliases, name) ? aliases[name] : undefined;
}

/** Where gate-sh's own files for the agents live, and how to start gate-sh's programs. */
export interface Install {
  /** the bash-named entry point ($GATE_HOME/bin/bash) */
  entry: string;
  /** absolute node binary */
  node: string;
  /** absolute bin/gate and bin/gate-sh of this install */
  gate: string;
  gateSh: string;
}

/** The user's folders the settings files live under, as src/paths/paths.ts computes them (homeDir,
 * codexHome), so set-up edits the Codex config beside the rules gate-sh reads. */
export interface Homes {
  home: string;
  codexHome: string;
}

/** The agent's settings file. */
export function settingsFile(id: AgentId, env: Env, homes: Homes): string {
  if (id === 'claude-code') return join(claudeDir(env, homes), 'settings.json');
  if (id === 'gemini') return join(homes.home, '.gemini', 'settings.json');
  return join(homes.codexHome, 'config.toml');
}

/** Claude Code's own state folder (CLAUDE_CONFIG_DIR, else ~/.claude). */
export function claudeDir(env: Env, homes: Pick<Homes, 'home'>): string {
  return env.CLAUDE_CONFIG_DIR || join(homes.home, '.claude');
}

/**
 * Folders of the agent's own that its shell must write from inside the turn sandbox: Claude Code's shell
 * route writes the snapshot of the user's shell (functions, aliases, PATH) into shell-snapshots from
 * inside the shell and sources it before every command. Only that folder, never HOME or ~/.claude: what
 * the snapshot defines is read and decided when a command sources it (src/script/sourced-files.ts), and
 * every program it runs still passes the exec gate.
 */
export function agentWritableRoots(id: AgentId, routes: readonly Route[], env: Env, homes: Pick<Homes, 'home'>): string[] {
  return id === 'claude-code' && routes.includes('shell') ? [join(claudeDir(env, homes), 'shell-snapshots')] : [];
}

/**
 * How each agent's hook lets gate-sh gate the command (src/integrations/hooks/decision.ts, HookRoute): both
 * let the hook rewrite it, so it runs through gate-sh; read from their code (Claude Code 2.1.197 and
 * 2.1.332: `hookSpecificOutput.updatedInput`; gemini-cli 0.61.0: `hookSpecificOutput.tool_input`, merged
 * into the tool's parameters). An agent without it would have its commands decided as running unsandboxed.
 */
export const HOOK_REWRITE: Record<'claude-code' | 'gemini', string> = {
  'claude-code': 'PreToolUse updatedInput',
  gemini: 'BeforeTool hookSpecificOutput.tool_input',
};

/** The hook command line an agent runs (through /bin/sh). */
export function hookCommand(id: 'claude-code' | 'gemini', inst: Install): string {
  return shellCommand([inst.node, inst.gate, 'hook', id]);
}

/** The JSON settings edits a route needs (Claude Code, gemini-cli). */
export function jsonEdits(id: 'claude-code' | 'gemini', route: Route, inst: Install): JsonEdit[] {
  if (id === 'claude-code') {
    if (route === 'shell') return [{ op: 'set', path: ['env', 'CLAUDE_CODE_SHELL'], value: inst.entry }];
    if (route === 'hook')
      return [{ op: 'add', path: ['hooks', 'PreToolUse'], item: { matcher: 'Bash', hooks: [{ type: 'command', command: hookCommand(id, inst) }] } }];
  }
  if (id === 'gemini' && route === 'hook')
    return [
      {
        op: 'add',
        path: ['hooks', 'BeforeTool'],
        item: { matcher: 'run_shell_command', hooks: [{ type: 'command', name: 'gate-sh', command: hookCommand(id, inst) }] },
      },
    ];
  return [];
}

/**
 * The lines `gate setup codex` puts into config.toml (MCP route), as [table, key, TOML value]: gate-sh's
 * MCP server, waited for before the first turn (`required`: otherwise the first request goes out before
 * its tool is listed), its tool calls not asked again by Codex (gate-sh asks), the variables that find
 * the same daemon forwarded (Codex starts MCP servers with a short environment), and the built-in shell
 * tools off (they would run commands with the login shell, ungated).
 */
export function codexSettings(inst: Install): [string, string, string][] {
  const str = (s: string) => JSON.stringify(s);
  return [
    ['features', 'shell_tool', 'false'],
    ['features', 'unified_exec', 'false'],
    ['mcp_servers.gate', 'command', str(inst.node)],
    ['mcp_servers.gate', 'args', `[${str(inst.gate)}, "mcp"]`],
    ['mcp_servers.gate', 'required', 'true'],
    ['mcp_servers.gate', 'default_tools_approval_mode', '"approve"'],
    ['mcp_servers.gate', 'env_vars', '["XDG_RUNTIME_DIR", "GATE_HOME", "GATE_SESSION"]'],
  ];
}

// ---- how each agent picks its shell ----------------------------------------------------------------

export interface ShellChoice {
  /** the shell the agent would run commands with ('' when none is found) */
  shell: string;
  /** how it was chosen, in the agent's own terms */
  why: string;
  /** an override the user set that the agent silently ignores */
  ignored?: string;
}

export interface Probe {
  executable(path: string): boolean;
  /** a program name resolved on a PATH, like `which` */
  which(name: string, path: string | undefined): string | undefined;
}

/** Claude Code's own rule (its shell provider): CLAUDE_CODE_SHELL, then SHELL, then zsh/bash. */
export function claudeShell(env: Env, settingsEnv: Record<string, unknown>, p: Probe): ShellChoice {
  const fromSettings = typeof settingsEnv.CLAUDE_CODE_SHELL === 'string' ? settingsEnv.CLAUDE_CODE_SHELL : undefined;
  const override = fromSettings ?? env.CLAUDE_CODE_SHELL;
  const where = fromSettings !== undefined ? 'settings.json env' : 'the environment';
  const names = (s: string) => s.includes('bash') || s.includes('zsh');
  let ignored: string | undefined;
  if (override) {
    if (names(override) && p.executable(override)) return { shell: override, why: `CLAUDE_CODE_SHELL=${override} (${where})` };
    ignored = `CLAUDE_CODE_SHELL=${override} (${where}) is ignored: Claude Code takes it only when the path contains 'bash' or 'zsh' and is executable`;
  }
  const sh = typeof settingsEnv.SHELL === 'string' ? settingsEnv.SHELL : env.SHELL;
  if (sh && names(sh) && p.executable(sh)) return { shell: sh, why: `SHELL=${sh}`, ...(ignored ? { ignored } : {}) };
  const bashFirst = sh?.includes('bash') ?? false;
  const order = bashFirst ? ['bash', 'zsh'] : ['zsh', 'bash'];
  const candidates = [...order.map((n) => p.which(n, env.PATH)).filter((x): x is string => !!x)];
  for (const n of order) for (const d of ['/bin', '/usr/bin', '/usr/local/bin', '/opt/homebrew/bin']) candidates.push(`${d}/${n}`);
  const found = candidates.find((c) => p.executable(c)) ?? '';
  return { shell: found, why: `no usable override: Claude Code's own search found ${found || 'nothing'}`, ...(ignored ? { ignored } : {}) };
}

/** gemini-cli: `bash` from its PATH. */
export function geminiShell(env: Env, p: Probe): ShellChoice {
  const found = p.which('bash', env.PATH) ?? '';
  return { shell: found, why: `gemini-cli runs 'bash' found on PATH: ${found || 'none'}` };
}

/** Codex: the login shell of the password database (accepted when named bash, zsh or sh). */
export function codexShell(loginShell: string): ShellChoice {
  const base = loginShell.split('/').pop() ?? '';
  if (['bash', 'zsh', 'sh'].includes(base)) return { shell: loginShell, why: `the login shell in the password database (${loginShell})` };
  return { shell: '/bin/bash', why: `the login shell ${loginShell || '(none)'} is not bash/zsh/sh: Codex falls back to its default` };
}
