/**
 * The realwork suite's rig (issue 29): a real daemon under the default policy (on-request, no rules, no
 * approver attached), in workspace-write or danger-full-access; a project run through `gate-sh -lc` or
 * `gate mcp`, and the same project run by plain bash in the same folder, freshly written each time, so
 * that only times need normalising. Test-only.
 */
import assert from 'node:assert/strict';
import { after, before, describe } from 'node:test';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { startDaemon, type DaemonProc } from '../helpers/daemon.js';
import { run, type Result } from '../helpers/run.js';
import { mcpSession, type McpSession } from '../integrations/helpers.js';
import type { Project } from './projects.js';

export type Mode = 'workspace-write' | 'danger-full-access';
export const MODES: Mode[] = ['workspace-write', 'danger-full-access'];

/** What a project's tools need and nothing of the test runner's own (pyenv shims, its npm settings). */
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export async function realworkDaemon(mode: Mode, rules: string[] = []): Promise<DaemonProc> {
  const d = await startDaemon({
    workspace: 'w',
    rules,
    env: { GATE_SANDBOX_MODE: mode, GATE_APPROVAL_POLICY: 'on-request', GATE_NO_AUTOSTART: '1', PATH, LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' },
  });
  // the test runner's own settings must not reach the project's tools
  for (const k of Object.keys(d.env)) if (/^(npm_|NODE_OPTIONS$|NODE_TEST_CONTEXT$|PYTHON|VIRTUAL_ENV$|MAKEFLAGS$|MFLAGS$)/.test(k)) delete d.env[k];
  return d;
}

/** One suite per sandbox mode, each with its own daemon (realworkDaemon) while it runs; `body` declares its tests. */
export function perMode(title: string, body: (daemon: () => DaemonProc) => void): void {
  for (const mode of MODES)
    describe(`${title}, ${mode}`, { timeout: 600_000 }, () => {
      let d: DaemonProc;
      before(async () => {
        d = await realworkDaemon(mode);
      });
      after(() => d?.close());
      body(() => d);
    });
}

/** The project's folder: the same path for both sides (the daemon's workspace). */
export function freshProject(d: DaemonProc, p: Project): string {
  const dir = join(d.ws, 'proj');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir);
  p.write(dir);
  return dir;
}

/** Times in tools' output (`in 0.02s`, `added 1 package in 312ms`, `real 0m0.1s`) and the temp folder. */
export function normalise(text: string, d: DaemonProc): string {
  return text
    .split(d.te.dir)
    .join('<tmp>')
    .replace(/\b\d+(\.\d+)?(ms|s|m)\b/g, '<t>');
}

export interface Side {
  code: number | null;
  stdout: string;
  stderr: string;
}

const LIMIT_MS = 240_000;

export async function plainBash(d: DaemonProc, dir: string, script: string, merged = false): Promise<Side> {
  const r = merged
    ? await run('bash', ['-c', 'exec bash -lc "$1" 2>&1', 'bash', script], { env: d.env, cwd: dir, timeoutMs: LIMIT_MS })
    : await run('bash', ['-lc', script], { env: d.env, cwd: dir, timeoutMs: LIMIT_MS });
  return norm(r, d);
}

export async function gated(d: DaemonProc, dir: string, script: string): Promise<Side> {
  return norm(await run(GATE_SH, ['-lc', script], { env: d.env, cwd: dir, timeoutMs: LIMIT_MS }), d);
}

/** Through `gate mcp`'s shell tool (output: stdout and stderr merged, as the tool gives them). */
export async function viaMcp(s: McpSession, d: DaemonProc, dir: string, script: string): Promise<Side> {
  // (the client's own call, not McpSession.shell: a build may take longer than its 60 s request timeout)
  const args = { command: script, workdir: dir, login: true, timeout_ms: LIMIT_MS };
  const res = await s.client.callTool({ name: 'shell', arguments: args }, undefined, { timeout: LIMIT_MS });
  const r = JSON.parse((res.content as { type: string; text: string }[])[0].text) as { exit_code: number; output: string };
  return { code: r.exit_code, stdout: normalise(r.output, d), stderr: '' };
}

function norm(r: Result, d: DaemonProc): Side {
  return { code: r.code, stdout: normalise(r.stdout, d), stderr: normalise(r.stderr, d) };
}

export function openMcp(d: DaemonProc): Promise<McpSession> {
  return mcpSession(d.env, { elicitation: false });
}

/** The audit log's records of prompts and denials (there must be none for real work). */
export function askedOrDenied(d: DaemonProc): string[] {
  let text = '';
  try {
    text = readFileSync(d.paths.auditLog, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((l) => /"decision":"(prompt|forbidden)"|"action":"Deny/.test(l));
}

/**
 * The project run by plain bash, then freshly written again and run through gate-sh (or `gate mcp`): the
 * same exit status and output, and nothing asked or denied on the way.
 */
export async function sameAsBash(d: DaemonProc, p: Project, via: { mcp?: McpSession } = {}): Promise<{ bash: Side; gate: Side }> {
  const before = askedOrDenied(d).length;
  const bash = await plainBash(d, freshProject(d, p), p.script, via.mcp !== undefined);
  const dir = freshProject(d, p);
  const gate = via.mcp ? await viaMcp(via.mcp, d, dir, p.script) : await gated(d, dir, p.script);
  assert.equal(bash.code, 0, `${p.name}: plain bash failed: ${bash.stdout}\n${bash.stderr}`);
  assert.deepEqual(gate, bash, p.name);
  assert.deepEqual(askedOrDenied(d).slice(before), [], `${p.name}: asked or denied`);
  return { bash, gate };
}
