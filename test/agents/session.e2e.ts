/**
 * Issue 31's test: for the pinned and the latest version of each agent (install.ts VERSIONS), every route
 * `gate setup` offers (and gemini's README set-up, both routes), the realistic 15-call session of session.ts
 * against a scripted model on loopback, no approver attached: each call but rm gives what the agent's own
 * bash gave in the same session (helpers.ts compareSession), rm is denied with gate-sh's reason, the agent
 * ends by itself (bounded), doctor says gated, undo is byte-exact. Sessions run a few at a time; each
 * agent × version's own-bash session runs once and is shared by its routes. Run by `npm run test:agents`.
 */
import { describe, test } from 'node:test';
import { compareSession, type KnownDifference, runSession, type SessionRoute, type SessionRun } from './helpers.js';
import { type PinnedAgent, VERSIONS } from './install.js';

const ROUTES: Record<PinnedAgent, SessionRoute[]> = {
  'claude-code': ['shell', 'hook'],
  codex: ['mcp'],
  gemini: ['hook', 'shell', 'default'],
};

/** Calls that do not behave as with the agent's own bash, each with its reason (issue 31's findings). */
export const KNOWN: readonly KnownDifference[] = [
  {
    agent: 'claude-code',
    routes: ['hook'],
    call: 4,
    gated: /^\.\/app\.py:1:def greet\(name\):$/,
    reason:
      "Claude Code's own shell sources its start-up snapshot, whose grep function prints `app.py:1:...`; the hook route rewrites the command to run in gate-sh, a shell without the snapshot's functions, so GNU grep prints `./app.py:1:...`",
  },
  {
    agent: 'claude-code',
    routes: ['shell'],
    call: 4,
    gated: /^(\.\/)?app\.py:1:def greet\(name\):$/,
    reason:
      "intermittent, seen on a loaded machine (2.1.197): Claude Code's snapshot, taken through gate-sh at start-up, was sometimes not in place, so GNU grep ran (`./app.py:1:...`) instead of the snapshot's grep function (`app.py:1:...`, as its own shell gives)",
  },
  {
    agent: 'claude-code',
    versions: ['2.1.332'],
    routes: ['hook'],
    call: 8,
    gated: /^def greet[\s\S]*print\(greet\("world"\)\)$/,
    reason:
      "Claude Code 2.1.332 reads the Bash command to tell the model which files it read (`cat`) and changed (`sed -i`) ('[This command modified 1 file you've previously read: app.py. Call Read before editing.]'); the hook rewrites the command to `gate-sh -c '...'`, which it does not look into, so that note is missing",
  },
  {
    agent: 'codex',
    routes: ['mcp'],
    call: 12,
    gated: /^def greet[\s\S]*Goodbye[\s\S]*\nstopped$/,
    reason:
      "Codex's own exec_command ends a call's background processes with the call, so under its own shell the server of call 11 is gone and the curl loop is still waiting at Codex's 10 s yield (no output, no exit status); gate-sh keeps the server, as bash does",
  },
  {
    agent: 'gemini',
    routes: ['hook'],
    call: 11,
    gated: /^serving on <port> as <pid>$/,
    reason:
      "gemini-cli adds `Background PIDs: <pid>` when its own shell leaves a background process in its process group; on the hook route the server runs inside gate-sh's sandbox (its own session), so gemini does not see it and prints no such line (on the README set-up gemini's wrapper runs in gate-sh with the command, and sees it)",
  },
  ...[12, 14].map((call) => ({
    agent: 'gemini' as const,
    routes: ['hook'] as SessionRoute[],
    call,
    gated: /^Tool execution blocked: Command injection detected: command substitution syntax/,
    reason:
      "gemini-cli 0.61.0 refuses any command with $(...) in it ('Command injection detected'), even with --yolo; the hook route would hide it from that check by rewriting the command to `gate-sh -c '<script>'`, so gate-sh's hook refuses it in gemini's words instead (docs/agents.md): gemini shows a hook's refusal as 'Tool execution blocked: <reason>'",
  })),
];

const baselines = new Map<string, Promise<SessionRun>>();
function baseline(agent: PinnedAgent, version: string): Promise<SessionRun> {
  const key = `${agent}@${version}`;
  if (!baselines.has(key)) baselines.set(key, runSession(agent, version, 'bash'));
  return baselines.get(key)!;
}

const concurrency = Number(process.env.GATE_AGENT_SESSIONS ?? 3);

describe('the 15-call session behaves as with the agent\'s own bash', { concurrency }, () => {
  for (const agent of Object.keys(ROUTES) as PinnedAgent[])
    for (const version of VERSIONS[agent])
      for (const route of ROUTES[agent])
        test(`${agent} ${version}, ${route === 'default' ? 'README set-up (hook and shell)' : `${route} route`}`, async (t) => {
          const [bash, gated] = await Promise.all([baseline(agent, version), runSession(agent, version, route)]);
          for (const note of compareSession(bash, gated, KNOWN)) t.diagnostic(note);
          t.diagnostic(`${agent} ${version} ${route}: ${Math.round(gated.run.ms / 1000)} s (own bash: ${Math.round(bash.run.ms / 1000)} s)`);
        });
});
