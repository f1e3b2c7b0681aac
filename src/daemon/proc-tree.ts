/**
 * Process ancestry from /proc, for approvers that answer only their own runs (an MCP server attaches with
 * `descendants_of: <its pid>` and sees prompts of the gate-sh processes it started, and of their nested runs).
 */
import { readFileSync } from 'node:fs';

/** The parent pid of `pid`, or undefined when the process is gone. */
export function parentPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(rest[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** True when `pid` is `ancestor` or one of its descendants (bounded walk: pid loops cannot hang it). */
export function isDescendant(pid: number, ancestor: number): boolean {
  let p: number | undefined = pid;
  for (let i = 0; i < 64 && p !== undefined && p > 0; i++) {
    if (p === ancestor) return true;
    p = parentPid(p);
  }
  return false;
}
