/**
 * Hanging up a PTY session so nothing lingers: every process whose session id is the PTY's session leader
 * gets SIGHUP (+SIGCONT, so stopped jobs see it), and whatever is still there after a grace period gets
 * SIGKILL. Processes that left the session (setsid, daemons) are not ours to kill, as with a real terminal.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** pid, session id and state of a process from /proc/<pid>/stat; undefined when it is gone. */
export function procStat(pid: number): { pid: number; pgrp: number; sid: number; state: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // the command name is in parentheses and may contain spaces or ')': fields start after the last ')'
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid, state: f[0], pgrp: Number(f[2]), sid: Number(f[3]) };
}

/** Live (not zombie) processes of session `sid`. */
export function sessionMembers(sid: number): number[] {
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(e)) continue;
    const s = procStat(Number(e));
    if (s && s.sid === sid && s.state !== 'Z') out.push(s.pid);
  }
  return out;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* already gone */
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGHUP every member of the session, then SIGKILL the ones that ignore it. Resolves when none is left. */
export async function hangUpSession(sid: number, graceMs = 500): Promise<void> {
  for (const pid of sessionMembers(sid)) {
    signal(pid, 'SIGHUP');
    signal(pid, 'SIGCONT');
  }
  const deadline = Date.now() + graceMs;
  while (sessionMembers(sid).length > 0 && Date.now() < deadline) await sleep(20);
  // SIGKILL again on every look: a process that forked while we looked would otherwise be left behind
  for (let i = 0; i < 50; i++) {
    const left = sessionMembers(sid);
    if (left.length === 0) return;
    for (const pid of left) signal(pid, 'SIGKILL');
    await sleep(20);
  }
}
