/**
 * End-to-end rig for a real agent CLI: a scratch HOME (gate-sh's default config there, team rules `rm`
 * forbidden and `git status` allowed), a git workspace holding `somefile`, the pinned agent on PATH, and a
 * scripted fake model on loopback (fake-model.ts). Test code only.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATE, ROOT } from '../helpers/env.js';
import { startFakeModel, type ToolResult } from './fake-model.js';
import { agentBinDir, PINNED, type PinnedAgent } from './install.js';

export const RULES = `prefix_rule(pattern=["rm"], decision="forbidden", justification="use trash instead")
prefix_rule(pattern=["git", "status"], decision="allow")
`;

export const GEMINI_SETTINGS = '{"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}}}\n';

/** gemini-cli's tool output without what changes every run (its process group id). */
export function geminiOutput(s: string): string {
  return s.replace(/\nProcess Group PGID: \d+/, '');
}

/** What gate-sh's MCP shell tool returned, from Codex's rendering of it ("Wall time: ...\nOutput:{json}"). */
export function codexMcpResult(s: string): { exit_code: number; output: string } {
  const i = s.indexOf('Output:');
  if (i < 0) throw new Error(`not an MCP tool result: ${s}`);
  return JSON.parse(s.slice(i + 'Output:'.length));
}

export interface Scratch {
  /** the agent's version on PATH */
  version: string;
  dir: string;
  home: string;
  work: string;
  env: Record<string, string>;
  cleanup(): void;
}

export function scratch(agent: PinnedAgent, version: string = PINNED[agent].version): Scratch {
  const dir = mkdtempSync(join(tmpdir(), 'ga-'));
  // HOME outside /tmp, as on a real machine: the turn sandbox leaves it read-only (only the workspace and
  // /tmp are writable), so whatever an agent writes under HOME from inside its shell is really tested
  const home = mkdtempSync(join('/var/tmp', 'gah-'));
  const work = join(dir, 'w');
  mkdirSync(join(home, '.gate-sh', 'rules'), { recursive: true });
  writeFileSync(join(home, '.gate-sh', 'rules', 'team.rules'), RULES);
  mkdirSync(work);
  mkdirSync(join(dir, 'r'), { mode: 0o700 });
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !/^(GATE_|CODEX_HOME$|CLAUDE_|ANTHROPIC_|GEMINI_|GOOGLE_|OPENAI_)/.test(k)) env[k] = v;
  Object.assign(env, { HOME: home, XDG_RUNTIME_DIR: join(dir, 'r'), PATH: `${agentBinDir(agent, version)}:${process.env.PATH}`, SHELL: '/bin/bash' });
  spawnSync('git', ['init', '-q', '.'], { cwd: work, env });
  if (agent === 'gemini') {
    // an API key login and no folder-trust question: what a user of gemini -p has already settled
    mkdirSync(join(home, '.gemini'));
    writeFileSync(join(home, '.gemini', 'settings.json'), GEMINI_SETTINGS);
  }
  writeFileSync(join(work, 'somefile'), 'keep me\n');
  return {
    version,
    dir,
    home,
    work,
    env,
    cleanup() {
      spawnSync(process.execPath, [GATE, 'daemon', 'stop'], { env, stdio: 'ignore' });
      rmSync(dir, { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export function gate(s: Scratch, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [GATE, ...args], { env: s.env, cwd: s.work, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  results: ToolResult[];
  ms: number;
  /** the agent's wall time per tool call (ms): from the model's tool call to the request with its result */
  callMs: number[];
}

const API = { 'claude-code': 'anthropic', gemini: 'gemini', codex: 'openai' } as const;

/** The agent's non-interactive command line and environment for one prompt against the fake model. */
function agentCommand(agent: PinnedAgent, url: string, extra: string[]): { argv: string[]; env: Record<string, string> } {
  if (agent === 'claude-code')
    return {
      argv: ['claude', '-p', 'run the scripted commands', ...extra],
      env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: 'sk-ant-fake', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', DISABLE_AUTOUPDATER: '1' },
    };
  if (agent === 'gemini')
    return {
      argv: ['gemini', '-p', 'run the scripted commands', ...extra],
      // as users run it: no GEMINI_CLI_NO_RELAUNCH (it changed how gemini -p ends on a hook's "ask": issue 31)
      env: { GEMINI_API_KEY: 'fake', GOOGLE_GEMINI_BASE_URL: url },
    };
  return {
    // a model Codex knows (its tool set depends on the model family); the provider is the fake server
    argv: [
      'codex',
      'exec',
      '--skip-git-repo-check',
      '-m',
      'gpt-5',
      '-c',
      'model_provider="fake"',
      '-c',
      `model_providers.fake={name="fake",base_url="${url}/v1",wire_api="responses",env_key="OPENAI_API_KEY"}`,
      ...extra,
      'run the scripted commands',
    ],
    env: { OPENAI_API_KEY: 'sk-fake' },
  };
}

/**
 * The line of README.md's agent section that starts `agent` (its `### <agent>` block, the line that is not
 * `./bin/gate ...`), comment cut: e.g. `claude --allowedTools Bash`, `PATH=~/.gate-sh/bin:$PATH gemini`.
 */
export function readmeAgentLine(agent: PinnedAgent): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const title = { 'claude-code': '### Claude Code', codex: '### Codex CLI', gemini: '### gemini-cli' }[agent];
  const at = readme.indexOf(`\n${title}\n`);
  if (at < 0) throw new Error(`README.md has no '${title}' section`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1] ?? '';
  const lines = block
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, '').trim())
    .filter((l) => l && !l.startsWith('./bin/gate '));
  const bin = PINNED[agent].bin;
  const line = lines.find((l) => new RegExp(`(^|\\s)${bin}(\\s|$)`).test(l));
  if (!line) throw new Error(`README.md's '${title}' block has no line starting ${bin}: ${JSON.stringify(lines)}`);
  return line;
}

/**
 * One non-interactive agent run: the fake model asks for `commands` one tool call each. `readme`: the agent
 * is started by README.md's own line for it (readmeAgentLine, through /bin/sh, the scratch HOME as `~`),
 * with the test's non-interactive arguments after it.
 */
export async function runAgent(
  agent: PinnedAgent,
  s: Scratch,
  commands: string[],
  extra: string[] = [],
  timeoutMs = 120_000,
  readme = false,
): Promise<AgentRun> {
  const model = await startFakeModel({ api: API[agent], commands, workdir: s.work });
  const cmd = agentCommand(agent, model.url, extra);
  if (readme) cmd.argv = ['/bin/sh', '-c', `${readmeAgentLine(agent)} "$@"`, 'sh', ...cmd.argv.slice(1)];
  const started = performance.now();
  try {
    const child = spawn(cmd.argv[0], cmd.argv.slice(1), { cwd: s.work, env: { ...s.env, ...cmd.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    clearTimeout(timer);
    const callMs = model.calls.filter((c) => c.resultAt !== undefined).map((c) => c.resultAt! - c.sent);
    return { code, stdout, stderr, results: model.results, ms: performance.now() - started, callMs };
  } finally {
    await model.close();
  }
}

/**
 * A `gate` that cannot answer: this checkout's launchers copied into the scratch without dist/ beside them,
 * put in place of the hook command that `gate setup <agent> --route hook` wrote into the agent's settings.
 */
export function breakHook(s: Scratch, agent: 'claude-code' | 'gemini'): void {
  const bin = join(s.dir, 'broken', 'bin');
  mkdirSync(bin, { recursive: true });
  for (const f of ['gate', 'gate-sh-node', 'package.json']) copyFileSync(join(ROOT, 'bin', f), join(bin, f));
  const [file, event] = agent === 'claude-code' ? [join(s.home, '.claude', 'settings.json'), 'PreToolUse'] : [join(s.home, '.gemini', 'settings.json'), 'BeforeTool'];
  const settings = JSON.parse(readFileSync(file, 'utf8'));
  settings.hooks[event][0].hooks[0].command = `${process.execPath} ${join(bin, 'gate')} hook ${agent}`;
  writeFileSync(file, JSON.stringify(settings));
}

/** The daemon's audit records (default GATE_HOME under the scratch HOME). */
export function audit(s: Scratch): Record<string, any>[] {
  try {
    return readFileSync(join(s.home, '.gate-sh', 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

/** A script with pipes, redirections, a heredoc and a command substitution (test c). */
export const PLUMBING = `printf 'b\\na\\nc\\n' | sort | tr a-z A-Z > out.txt
cat <<'EOF' | wc -l
one
two
EOF
echo "lines=$(wc -l < out.txt)"; cat out.txt; ls nothing-here 2>&1 | sed 's/^ls: //'`;

/**
 * The hook route's proof that a command runs through gate-sh (issue 30 finding 9): it runs in gate-sh
 * (GATE_RUN), in the turn sandbox (HOME is read-only there: the scratch HOME is outside /tmp), and under
 * the exec gate (make's `rm`, which no pre-flight sees, is denied by the rule when make starts it).
 */
export const HOOK_ROUTE_CHECKS = [
  'echo "gated=${GATE_RUN:+yes}"',
  'touch ~/outside-the-workspace && echo wrote',
  "printf 'all:\\n\\trm -f somefile\\n' > Makefile && make",
];

export function checkHookRoute(outputs: string[]): void {
  const [gated, sandboxed, execGated] = outputs;
  assert.match(gated, /gated=yes/);
  assert.match(sandboxed, /Read-only file system/);
  assert.doesNotMatch(sandboxed, /^wrote$/m); // (gate-sh's notice names the command, `echo wrote` included)
  assert.match(execGated, /gate-sh: denied: rm -f somefile: Execution forbidden by policy: use trash instead/);
}
