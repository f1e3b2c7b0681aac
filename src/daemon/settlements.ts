/**
 * What the daemon remembers of settled subcommands, per cached decider result: the run-table keys of a
 * result in a cwd (and its encoded audit fields), and the settlement a cached script's own policy answers
 * make in a cwd, shared by every run of it there. Caches only (WeakMaps keyed by the decider's results, so
 * a policy reload drops them with the decider); no I/O.
 */
import type { Action } from '../protocol/index.js';
import type { ScriptResult, SubcommandResult } from '../decide/index.js';
import { nestedShell } from '../script/index.js';
import { newSettlement, scriptKey, settledAction, settleKey, type RunRecord, type RunTable, type Settlement } from './runs.js';

export interface ResultKeys {
  cwd: string;
  settle: string;
  /** set for a `bash -c '<script>'` subcommand */
  script?: string;
  /** the audit fields after kind and run_id when the policy's answer stands (see audit-fields.ts) */
  audit?: string;
}

export class Settlements {
  private readonly keys = new WeakMap<SubcommandResult, ResultKeys>();
  private readonly shared = new WeakMap<ScriptResult, Map<string, Settlement>>();

  /** The run-table keys of a result in a cwd, computed once per cached result (repeated scripts reuse it). */
  keysOf(s: SubcommandResult, cwd: string): ResultKeys {
    let k = this.keys.get(s);
    if (k?.cwd !== cwd) {
      const inv = nestedShell(s.argv);
      k = { cwd, settle: settleKey(s.argv, cwd), script: inv ? scriptKey(inv.script, cwd) : undefined };
      this.keys.set(s, k);
    }
    return k;
  }

  /** Remember a subcommand's action (and, for a nested script, who approved it) in a settlement. */
  settleInto(st: Settlement, s: SubcommandResult, action: Action, approvalId: string, cwd: string): void {
    const keys = this.keysOf(s, cwd);
    st.settled.set(keys.settle, action);
    if (keys.script !== undefined) st.scripts.set(keys.script, approvalId);
  }

  /** What a cached script's own policy answers settle in a cwd: made once, shared by every run of it there. */
  sharedSettlement(result: ScriptResult, cwd: string): Settlement {
    let byCwd = this.shared.get(result);
    if (!byCwd) this.shared.set(result, (byCwd = new Map()));
    let st = byCwd.get(cwd);
    if (!st) {
      st = newSettlement();
      for (const s of result.subcommands) if (s.action.type !== 'Deny' && !s.unsettled) this.settleInto(st, s, s.action, '', cwd);
      // a script run from many folders would grow this without bound: keep the latest few
      if (byCwd.size >= 16) byCwd.delete(byCwd.keys().next().value!);
      byCwd.set(cwd, st);
    }
    return st;
  }
}

/** What this run settled for an argv+cwd, or (an interactive session's run) what its current line did. */
export function settledFor(runs: RunTable, run: RunRecord | undefined, key: string): Action | undefined {
  if (!run) return undefined;
  const current = run.current !== undefined ? runs.live(run.current) : undefined;
  return settledAction(run, key) ?? (current ? settledAction(current, key) : undefined);
}
