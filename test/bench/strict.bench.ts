/**
 * Strict mode that does not nag (issue 17): prompts per script and wall time of 33 typical agent scripts
 * (test/helpers/agent-scripts.ts), each run as `gate-sh -lc '<script>'` against a workspace-write daemon,
 * under `untrusted` and under `on-request`. An approval console answers every prompt `approved` and counts
 * it (pre-flight and exec prompts alike), so every script runs to its end. The home has a login profile
 * that runs programs, as /etc/profile and ~/.bashrc do. Prints one JSON object last.
 *
 * GATE_BENCH_ROOT=<checkout> measures another build (its bin/gate-sh and bin/gate) with the same scripts:
 * how the "before" figures in docs/strict.md were taken.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOT, tempEnv } from '../helpers/env.js';
import { AGENT_SCRIPTS, AGENT_SCRIPT_RULES, agentWorkspace } from '../helpers/agent-scripts.js';
import { startDaemon } from '../helpers/daemon.js';

const root = process.env.GATE_BENCH_ROOT ?? ROOT;
const GATE = join(root, 'bin', 'gate');
const GATE_SH = join(root, 'bin', 'gate-sh');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function runScript(script: string, env: Record<string, string>, cwd: string): Promise<{ ms: number; code: number | null }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const c = spawn(GATE_SH, ['-lc', script], { env, cwd, stdio: ['ignore', 'ignore', 'ignore'] });
    c.on('exit', (code) => resolve({ ms: performance.now() - t0, code }));
  });
}

interface PolicyFigures {
  prompts_total: number;
  scripts_prompting: number;
  prompts_per_script: Record<string, number>;
  wall_ms_median: number;
  wall_ms_total: number;
  exit_nonzero: string[];
}

async function measure(approvalPolicy: string, home: string): Promise<PolicyFigures> {
  const te = tempEnv({
    HOME: home,
    GATE_APPROVAL_POLICY: approvalPolicy,
    GATE_SANDBOX_MODE: 'workspace-write',
    GATE_NO_AUTOSTART: '1',
    GIT_AUTHOR_NAME: 'A',
    GIT_AUTHOR_EMAIL: 'a@example.com',
    GIT_COMMITTER_NAME: 'A',
    GIT_COMMITTER_EMAIL: 'a@example.com',
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
  });
  const env = te.env;
  const ws = join(te.dir, 'w');
  agentWorkspace(ws, env);
  const d = await startDaemon({ te, rules: AGENT_SCRIPT_RULES, autoApprove: true, gate: GATE });
  try {
    const per: Record<string, number> = {};
    const wall: number[] = [];
    const nonzero: string[] = [];
    for (const script of AGENT_SCRIPTS) {
      const before = d.prompts.length;
      const r = await runScript(script, env, ws);
      per[script] = d.prompts.length - before;
      wall.push(r.ms);
      if (r.code !== 0) nonzero.push(script);
    }
    return {
      prompts_total: Object.values(per).reduce((a, b) => a + b, 0),
      scripts_prompting: Object.values(per).filter((n) => n > 0).length,
      prompts_per_script: per,
      wall_ms_median: Math.round(median(wall)),
      wall_ms_total: Math.round(wall.reduce((a, b) => a + b, 0)),
      exit_nonzero: nonzero,
    };
  } finally {
    await d.close();
  }
}

const home = mkdtempSync('/var/tmp/gate-bench-home-');
writeFileSync(join(home, '.profile'), 'export FROM_PROFILE=yes\nuname -s > /dev/null\nif [ "$(id -u)" -ge 0 ]; then :; fi\n');
try {
  const untrusted = await measure('untrusted', home);
  const onRequest = await measure('on-request', home);
  console.log(
    JSON.stringify({
      build: root,
      scripts: AGENT_SCRIPTS.length,
      untrusted,
      on_request: onRequest,
      load_average: (await import('node:os')).loadavg().map((x) => +x.toFixed(1)),
    }),
  );
} finally {
  rmSync(home, { recursive: true, force: true });
}
