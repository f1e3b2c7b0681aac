/**
 * Risk assessment hook (optional, off by default). For each prompt the daemon runs the configured assessor
 * with one JSON object on stdin ({command, cwd, reason, matched_rule, ...}) and reads
 * `{summary, risk_level: low|medium|high}` from its stdout. Advisory only: it is shown next to the prompt and
 * never changes a decision. A slow (over the time limit), crashing, or garbage-printing assessor is ignored:
 * the prompt appears without an assessment, and `onFailure` says why (daemon log).
 */
import { spawn } from 'node:child_process';
import type { RiskAssessment } from '../protocol/index.js';

export type { RiskAssessment };

export interface RiskInput {
  command: string[];
  /** the command as one shell-quoted string */
  display: string;
  cwd: string;
  reason?: string;
  matched_rule?: string;
  origin: 'preflight' | 'exec' | 'network';
  sandbox_permissions?: string;
}

export interface AssessOptions {
  /** argv, or a string run by /bin/sh -c */
  assessor: string | string[];
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  onFailure?: (why: string) => void;
}

export const ASSESSOR_TIMEOUT_MS = 5_000;
const MAX_OUTPUT = 64 * 1024;
const MAX_SUMMARY = 500;

/** Run the assessor once; resolves with its assessment or undefined (never rejects, never outlives timeoutMs). */
export function assessRisk(input: RiskInput, opts: AssessOptions): Promise<RiskAssessment | undefined> {
  const argv = typeof opts.assessor === 'string' ? ['/bin/sh', '-c', opts.assessor] : opts.assessor;
  const fail = (why: string): undefined =>
    void opts.onFailure?.(`risk assessor ${JSON.stringify(argv.join(' ')).slice(0, 120)}: ${why}; the prompt is shown without an assessment`);
  if (argv.length === 0 || !argv[0]) return Promise.resolve(fail('empty command'));
  return new Promise((resolve) => {
    let out = '';
    let finished = false;
    const done = (v: RiskAssessment | undefined): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      resolve(v);
    };
    // Own process group, so a timeout kills whatever the assessor started too.
    const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'ignore'], detached: true, env: opts.env ?? process.env });
    const kill = (): void => {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    };
    const ms = opts.timeoutMs ?? ASSESSOR_TIMEOUT_MS;
    const timer = setTimeout(() => {
      kill();
      done(fail(`no answer within ${ms / 1000} s`));
    }, ms);
    child.on('error', (e) => done(fail(`cannot start: ${e.message}`)));
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      out += d;
      if (out.length > MAX_OUTPUT) {
        kill();
        done(fail(`output over ${MAX_OUTPUT} bytes`));
      }
    });
    child.stdin.on('error', () => undefined); // an assessor that ignores its input
    child.stdin.end(JSON.stringify(input) + '\n');
    child.on('close', (code, signal) => {
      if (finished) return;
      if (code !== 0) return done(fail(signal ? `killed by ${signal}` : `exit status ${code}`));
      const r = parseAssessment(out);
      done(typeof r === 'string' ? fail(r) : r);
    });
  });
}

/** The assessor's stdout → an assessment, or why it is not one. Pure. */
export function parseAssessment(stdout: string): RiskAssessment | string {
  let v: unknown;
  try {
    v = JSON.parse(stdout.trim());
  } catch {
    return 'output is not JSON';
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'output is not a JSON object';
  const o = v as Record<string, unknown>;
  if (o.risk_level !== 'low' && o.risk_level !== 'medium' && o.risk_level !== 'high') return 'risk_level must be low, medium or high';
  if (typeof o.summary !== 'string' || !o.summary.trim()) return 'summary must be a non-empty string';
  const summary = o.summary.trim().replace(/\s+/g, ' ');
  return { summary: summary.length > MAX_SUMMARY ? `${summary.slice(0, MAX_SUMMARY - 1)}…` : summary, risk_level: o.risk_level };
}
