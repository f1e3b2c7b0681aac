/**
 * End-to-end rig for a real agent CLI: a scratch HOME (gate-sh's default config there, team rules `rm`
 * forbidden and `git status` allowed), a git workspace holding `somefile`, the pinned agent on PATH, and a
 * scripted fake model on loopback (fake-model.ts). Test code only.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATE, ROOT } from '../helpers/env.js';
import { startFakeModel, type ToolResult } from './fake-model.js';
import { agentBinDir, PINNED, type PinnedAgent } from './install.js';
import { type CallResult, callResult, freePort, normalise, prepareSession, RM_CALL, sessionCommands, stopServer, USER_ENV } from './session.js';

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
    // nor what `npm run test:agents` adds (npm_*, INIT_CWD, NODE, COLOR, and EDITOR=vi when unset): the
    // same environment however the tests are started (the session sets EDITOR itself, session.ts USER_ENV)
    if (v !== undefined && !/^(GATE_|CODEX_HOME$|CLAUDE_|ANTHROPIC_|GEMINI_|GOOGLE_|OPENAI_|npm_|INIT_CWD$|NODE$|COLOR$|EDITOR$)/i.test(k)) env[k] = v;
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
      // --force: a run or background job the agent left (or a time-out cut short) must not keep the daemon
      // alive after its folders are gone
      spawnSync(process.execPath, [GATE, 'daemon', 'stop', '--force'], { env, stdio: 'ignore' });
      // retried (a growing delay, 20 s in all): what the stopped daemon's runs and the agent's leftovers still
      // write may go a while after on a loaded machine (seen once: ENOTEMPTY after the 10 retries of 5.5 s)
      rmSync(dir, { recursive: true, force: true, maxRetries: 20 });
      rmSync(home, { recursive: true, force: true, maxRetries: 20 });
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
    // its own process group, so that a time-out ends the agent with whatever it started (gemini relaunches
    // itself: killing the first process alone leaves the second holding the pipes, and the test file open)
    const child = spawn(cmd.argv[0], cmd.argv.slice(1), { cwd: s.work, env: { ...s.env, ...cmd.env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, timeoutMs);
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    clearTimeout(timer);
    child.stdout.destroy();
    child.stderr.destroy();
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

/** A route `gate setup` offers, 'default' (gemini: `gate setup gemini`, hook and shell, started as README.md says), or 'bash': no gate-sh. */
export type SessionRoute = 'shell' | 'hook' | 'mcp' | 'default' | 'bash';

/** The files `gate setup` may change, as the user had them before (content, or null when absent). */
function setupFiles(agent: PinnedAgent, s: Scratch): string[] {
  const own = { 'claude-code': join(s.home, '.claude', 'settings.json'), gemini: join(s.home, '.gemini', 'settings.json'), codex: join(s.home, '.codex', 'config.toml') }[agent];
  return [own, join(s.home, '.gate-sh', 'config.toml'), join(s.home, '.gate-sh', 'bin', 'bash')];
}

function snapshot(files: string[]): (string | null)[] {
  return files.map((f) => (existsSync(f) ? readFileSync(f, 'latin1') : null));
}

/** The user's own settings before set-up (gemini's are GEMINI_SETTINGS, written by scratch()). */
const USER_SETTINGS = {
  'claude-code': ['.claude/settings.json', '{\n  "includeCoAuthoredBy": false,\n  "env": {"MY_VAR": "1"}\n}\n'],
  codex: ['.codex/config.toml', '# my Codex settings\nhide_agent_reasoning = true\n'],
} as const;

export interface SessionRun {
  agent: PinnedAgent;
  version: string;
  route: SessionRoute;
  port: number;
  run: AgentRun;
  /** each call read back as (output, exit status) */
  calls: CallResult[];
  /** the workspace's somefile after the session (null: deleted) */
  somefile: string | null;
}

/**
 * Issue 31's session (session.ts) for one agent × version × route in a fresh scratch, no approver attached:
 * set up as README.md says, doctor checked (gated, the route wired), the agent started as README.md says,
 * then `gate setup --undo` checked byte for byte against the user's files before set-up. 'bash': the same
 * session with the agent's own shell (no gate-sh), what every other route is compared with.
 */
export async function runSession(agent: PinnedAgent, version: string, route: SessionRoute, timeoutMs = 300_000): Promise<SessionRun> {
  const s = scratch(agent, version);
  const port = await freePort();
  try {
    Object.assign(s.env, USER_ENV);
    prepareSession(s.home, s.work, s.env);
    if (agent in USER_SETTINGS) {
      const [rel, text] = USER_SETTINGS[agent as keyof typeof USER_SETTINGS];
      mkdirSync(join(s.home, rel, '..'), { recursive: true });
      writeFileSync(join(s.home, rel), text);
    }
    const files = setupFiles(agent, s);
    const before = snapshot(files);
    let extra: string[] = [];
    let readme = false;
    if (route === 'bash') {
      // the agent's own shell, let run without asking (as --allowedTools Bash / --yolo do under gate-sh)
      extra = { 'claude-code': ['--allowedTools', 'Bash'], gemini: ['--yolo'], codex: ['--dangerously-bypass-approvals-and-sandbox'] }[agent];
    } else {
      const set = gate(s, route === 'default' ? ['setup', agent] : ['setup', agent, '--route', route]);
      assert.equal(set.code, 0, set.stderr);
      const doc = gate(s, ['doctor']);
      assert.equal(doc.code, 0, doc.stdout + doc.stderr);
      assert.match(doc.stdout, /: gated by gate-sh\n/);
      assert.doesNotMatch(doc.stdout, /NOT gated|WARNING/);
      const json = JSON.parse(gate(s, ['doctor', '--json']).stdout).find((r: { agent: string }) => r.agent === agent);
      for (const r of route === 'default' ? ['hook', 'shell'] : [route])
        assert.equal(json.routes.find((x: { route: string }) => x.route === r).state, 'wired', JSON.stringify(json));
      // started as README.md says; the hook route needs no --allowedTools (the hook's allow lets it run)
      readme = !(route === 'hook');
      if (agent === 'gemini') extra = ['--yolo'];
      // Codex's own sandbox holds through gate mcp (the stricter of it and gate-sh's), and `codex exec` asks
      // read-only unless told otherwise: the session edits files, as users who let Codex edit do
      if (agent === 'codex') extra = ['--sandbox', 'workspace-write'];
    }
    const run = await runAgent(agent, s, sessionCommands(port), extra, timeoutMs, readme);
    stopServer(s.work, port);
    const somefile = existsSync(join(s.work, 'somefile')) ? readFileSync(join(s.work, 'somefile'), 'utf8') : null;
    if (route !== 'bash') {
      const undo = gate(s, ['setup', '--undo', agent]);
      assert.equal(undo.code, 0, undo.stderr);
      assert.deepEqual(snapshot(files), before, `gate setup --undo ${agent} gives back ${files.join(', ')} byte for byte`);
    }
    const mcp = agent === 'codex' && route !== 'bash';
    return { agent, version, route, port, run, calls: run.results.map((r) => callResult(agent, r, mcp)), somefile };
  } finally {
    stopServer(s.work, port);
    s.cleanup();
  }
}

/** A call that does not behave as with the agent's own bash, known and explained (issue 31's report). */
export interface KnownDifference {
  agent: PinnedAgent;
  /** versions it holds for (all when absent) */
  versions?: string[];
  routes: SessionRoute[];
  /** the call's number in the session, from 1 */
  call: number;
  /** what the call gives under gate-sh instead (normalised output) */
  gated: RegExp;
  reason: string;
}

/**
 * The comparison of issue 31: every call but rm gives the output and exit status the agent's own bash gave
 * (normalising commit ids, dates, pids and the server's port), but for a known difference, which must
 * still read as recorded (so a fix shows, and nothing differs silently); rm is denied with gate-sh's reason
 * and the file is kept.
 */
export function compareSession(bash: SessionRun, gated: SessionRun, known: readonly KnownDifference[]): string[] {
  const got = (r: SessionRun) => `${r.calls.length} calls answered: ${JSON.stringify(r.calls.slice(-2))}; stderr: ${r.run.stderr.slice(-1500)}`;
  assert.notEqual(gated.run.code, null, `${gated.agent} ended by itself within the bound (no hang); ${got(gated)}`);
  assert.equal(gated.run.code, 0, got(gated));
  assert.equal(bash.calls.length, 15, got(bash));
  assert.equal(gated.calls.length, 15, got(gated));
  const notes: string[] = [];
  const differ: string[] = [];
  const commands = sessionCommands(gated.port);
  for (let i = 0; i < 15; i++) {
    const b = bash.calls[i];
    const g = gated.calls[i];
    const where = `${gated.agent} ${gated.version}, ${gated.route} route, call ${i + 1} (${commands[i].split('\n')[0]})`;
    if (i === RM_CALL) {
      if (!/gate-sh: denied: rm -rf somefile: .*use trash instead/.test(g.output) || (g.exit !== undefined && g.exit !== 126))
        differ.push(`${where}: not denied with gate-sh's reason: ${JSON.stringify(g)}`);
      continue;
    }
    const mine = { output: normalise(g.output, gated.port), exit: g.exit };
    const want = { output: normalise(b.output, bash.port), exit: b.exit };
    const k = known.find(
      (d) => d.agent === gated.agent && d.routes.includes(gated.route) && d.call === i + 1 && (!d.versions || d.versions.includes(gated.version)),
    );
    if (k) {
      if (k.gated.test(mine.output)) notes.push(`${where}: known difference: ${k.reason}`);
      else differ.push(`${where}: the known difference (${k.reason}) reads otherwise now: ${JSON.stringify(mine)} (own bash: ${JSON.stringify(want)})`);
      continue;
    }
    if (mine.output !== want.output || mine.exit !== want.exit) differ.push(`${where}: ${JSON.stringify(mine)}, own bash: ${JSON.stringify(want)}`);
  }
  assert.deepEqual(differ, [], `calls that do not behave as with ${gated.agent}'s own bash:\n${differ.join('\n')}`);
  assert.equal(gated.somefile, 'keep me\n');
  return notes;
}
