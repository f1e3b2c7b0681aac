/**
 * Codex's approval_cases end to end through gate-sh: a real daemon per (rules, approval policy, sandbox),
 * the case's command as a gate-sh script, the outcome checked at the shell: `forbidden` → exit 126 with
 * `gate-sh: denied: ...` and Codex's reason; `needs_approval` with no approver → exit 126 with the
 * "no approver is attached" message; `skip` → the script runs (its own status, no denial).
 * Cases that ask for escalation or a prefix_rule need a caller that can request them (not gate-sh's
 * invocation), so they stay with the daemon's own tests.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { vectors, type Vector } from '../helpers/vectors.js';
import { gateSh, pool } from './helpers.js';
import { startDaemon } from '../helpers/daemon.js';

function sh(w: string): string {
  return /^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** gate-sh invocation for a case: `bash -lc S` → ['-lc', S]; an argv → ['-c', quoted argv]. */
function invocation(cmd: string[]): { args: string[] } {
  if ((cmd[0] === 'bash' || cmd[0] === 'zsh') && (cmd[1] === '-lc' || cmd[1] === '-c') && cmd.length === 3) return { args: [cmd[1], cmd[2]] };
  return { args: ['-c', cmd.map(sh).join(' ')] };
}

const usable = vectors.approval_cases.filter((c: Vector) => c.sandbox_permissions === 'use_default' && c.prefix_rule == null);

/**
 * Where gate-sh is deliberately stricter than Codex, by note: still pinned (the command must be denied at
 * the shell), so a change either way shows up here.
 */
const STRICTER: Record<string, string> = {
  'heredoc_with_variable_assignment_is_not_reduced_to_allowed_prefix (non-Windows)': 'PATH pointing into a writable folder is a code-loading variable: prompt',
};
const stricter = (c: Vector): boolean => Object.hasOwn(STRICTER, c.note) || /this becomes needs_approval/.test(c.note);

test('Codex approval_cases through gate-sh (forbidden, needs approval with no approver, skip)', { timeout: 400_000 }, async () => {
  assert.ok(usable.length >= 20, `only ${usable.length} usable cases`);
  const groups = new Map<string, Vector[]>();
  for (const c of usable) {
    const k = JSON.stringify([c.policy, c.approval_policy, c.sandbox]);
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  const failures: string[] = [];
  await pool([...groups.values()], 2, async (cases) => {
    const { policy, approval_policy, sandbox } = cases[0];
    const d0 = await import('../helpers/env.js');
    const te = d0.tempEnv();
    const ws = join(te.dir, 'ws');
    mkdirSync(ws);
    const args: string[] = ['--approval-policy', typeof approval_policy === 'string' ? approval_policy : JSON.stringify(approval_policy)];
    args.push('--sandbox', typeof sandbox === 'string' ? sandbox : Object.keys(sandbox)[0]);
    if (policy) {
      const rules = join(te.dir, 'case.rules');
      writeFileSync(rules, policy);
      args.push('--rules', rules);
    }
    const d = await startDaemon({ te, args });
    try {
      for (const c of cases) {
        const inv = invocation(c.command);
        // a plain PATH: version-manager shims (pyenv) would exec a different program than the rule names
        const r = await gateSh(inv.args, { env: { ...te.env, GATE_NO_AUTOSTART: '1', PATH: '/usr/local/bin:/usr/bin:/bin' }, cwd: ws });
        const err = r.stderr.toString();
        const label = `${JSON.stringify(c.command)} [${c.note}] → ${c.expect.type}: got ${r.code} ${JSON.stringify(err)}`;
        const ok = (() => {
          // (gate-sh adds what asked after the message: the rule, the variables, the opaque command)
          const noApprover = /^gate-sh: approval needed for '.*' but no approver is attached \(run 'gate approve'\)(: [^\n]*)?\n$/s.test(err);
          if (stricter(c)) return r.code === 126 && (err.startsWith('gate-sh: denied: ') || noApprover);
          if (c.expect.type === 'forbidden') {
            if (r.code !== 126 || !err.startsWith('gate-sh: denied: ')) return false;
            const reason: string = c.expect.reason;
            // Codex quotes the whole command (`bash -lc '...'`); the daemon answers per subcommand and
            // quotes that: compare what follows the quoted command
            const tail = reason.startsWith('`') ? reason.slice(reason.indexOf('` ') + 2) : reason;
            return err.includes(tail);
          }
          if (c.expect.type === 'needs_approval') return r.code === 126 && noApprover;
          return r.code !== 126 && !err.includes('gate-sh: denied');
        })();
        if (!ok) failures.push(label);
      }
    } finally {
      await d.stop();
      te.cleanup();
    }
  });
  assert.deepEqual(failures, []);
});
