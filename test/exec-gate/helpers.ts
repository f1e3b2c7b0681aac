/**
 * Exec-gate test helpers: the suites' daemon options (the daemon itself is test/helpers/daemon.ts's, with an
 * auto-approving `gate approve --json` console when asked), gate-sh runs and processes with bounded time.
 * Test-only.
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { join, normalize } from 'node:path';
import { GATE_SH, ROOT } from '../helpers/env.js';
import { auditLines, type DaemonOptions, type DaemonProc } from '../helpers/daemon.js';
import { run, type Result } from '../helpers/run.js';
import { SHIMS_DIR } from '../../src/exec/exec-gate.js';
import { preloadFirst } from '../../src/exec/preload-first.js';

export { run, type Result };

/** The shims are the ASan+UBSan test build (`make -C shims SANITIZE=address`, test/c/README.md): every process
 * of a run starts the sanitizer's runtime (about 0.15 s more each on a loaded machine), so a test of hundreds
 * of processes in one call gives that call more time. */
export const SANITIZER_BUILD = preloadFirst(SHIMS_DIR) !== undefined;

/**
 * The exec-gate suites' daemon options: rules in default.rules, a workspace `w`, approval on request, no
 * autostart and, unless a config.toml says otherwise, no turn sandbox (these tests are about the exec gate).
 */
export function execGateOptions(o: { rules: string[]; autoApprove?: boolean; env?: Record<string, string>; config?: string }): DaemonOptions {
  const env = {
    ...(o.config ? {} : { GATE_SANDBOX_MODE: 'danger-full-access' }),
    GATE_APPROVAL_POLICY: 'on-request',
    GATE_NO_AUTOSTART: '1',
    ...(o.env ?? {}),
  };
  return { rules: o.rules, config: o.config, env, workspace: 'w', autoApprove: o.autoApprove };
}

/** The jobs' results in order, four running at a time (a datagram queue holds 10 messages; these are
 * tests, not load tests). */
export async function fourAtATime<T>(jobs: (() => Promise<T>)[]): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const k = next++;
      out[k] = await jobs[k]();
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return out;
}

export function gateSh(
  rig: DaemonProc,
  script: string,
  o: { input?: string | Buffer; env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<Result> {
  return run(GATE_SH, ['-c', script], { env: { ...rig.env, ...(o.env ?? {}) }, cwd: o.cwd ?? rig.ws, input: o.input, timeoutMs: o.timeoutMs });
}

/**
 * A gate-sh script that runs `script` as the model's own inline code: `python3 -c` exec'ing `/bin/bash -c`
 * with the script as its argument, literally in the run's command line. Pre-flight sees only python3 (it
 * does not read what inline code does with its arguments), so every exec in the script meets the exec gate
 * unsettled, and reads as the model's text (python -c and bash -c carry their caller's text,
 * src/decide/provenance.ts), so an allow rule escalates it there. Why this form:
 *  - not `. ./file` (what the suites used before): a sourced file is not the model's text, whoever wrote it,
 *    and a run that sources one is never widened by a rule (docs/exec-gate.md, "Where a command came from");
 *  - not `bash ./file`: a program running its own file, whose execs no rule takes out of the sandbox;
 *  - not `bash -c '...'` nor a PATH lookup of bash: the PATH shim starts a nested run whose pre-flight
 *    settles the script's commands (`/bin/bash` by its path skips the shim, as any program may);
 *  - `os.execv`, not subprocess: the script's bash replaces python in place (same pid, descriptors and
 *    terminal), so exit statuses (0-255, 128+n for a signal), `$!`, `wait` and signals are bash's own.
 * No rule may name bash in a suite using it: the exec of bash itself would escalate, the whole script with it.
 */
export function asInlineCode(script: string): string {
  const quoted = `'${script.replace(/'/g, () => "'\\''")}'`;
  return `python3 -c 'import os, sys; os.execv("/bin/bash", ["bash", "-c", sys.argv[1]])' ${quoted}`;
}

let escPath: string | undefined;

/** test/exec-gate/esc.sh, outside any writable folder (a program the caller could have written is never
 * escalated without a prompt): the checkout itself, unless it lies under a world-writable temporary
 * folder (a CI clone in /tmp), then a root-owned copy under /var/lib, removed at exit. */
export function escFixture(): string {
  if (escPath) return escPath;
  const src = join(ROOT, 'test', 'exec-gate', 'esc.sh');
  if (!/^\/(tmp|var\/tmp|dev\/shm)(\/|$)/.test(ROOT)) return (escPath = src);
  const dir = mkdtempSync('/var/lib/gate-sh-test-');
  escPath = join(dir, 'esc.sh');
  copyFileSync(src, escPath);
  chmodSync(escPath, 0o755);
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return escPath;
}

/** An audit record, the fields the exec-gate tests read. */
export interface AuditRec {
  kind: string;
  argv?: string[];
  reused?: boolean;
  source?: string;
  action?: string;
  detail?: string;
}

/** The daemon's audit log, one record per line. */
export function auditRecords(rig: DaemonProc): AuditRec[] {
  return auditLines<AuditRec>(rig.paths.auditLog);
}

/** The exec records of the program at path, in order: [argv after the program, reused]. */
export function execsOf(rig: DaemonProc, path: string): [string[], boolean][] {
  return auditRecords(rig)
    .filter((r) => r.kind === 'exec' && r.action !== undefined && r.argv !== undefined && normalize(r.argv[0]) === path)
    .map((r) => [r.argv!.slice(1), r.reused === true]);
}
