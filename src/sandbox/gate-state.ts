/**
 * The gate's guard for runs without a sandbox (danger-full-access, an Unsandboxed escalation): the lines
 * gate-launch's tree root mounts in a mount namespace of the run's own (shims/gate-guard.c) so that the run
 * cannot change the policy it runs under — rules, config, audit log and gate-sh's installation read-only,
 * the runtime folder (every session's approval socket) hidden but for this session's request folder, and in
 * it the other runs' client folders.
 * Nothing else is taken from the run (docs/sandbox.md, "The gate's own state under danger-full-access").
 *
 *   d PATH  folder kept read-only, made when missing (GATE_HOME, CODEX_HOME)
 *   f PATH  file or folder kept read-only when it exists (the installation, rule files named elsewhere)
 *   h PATH  folder hidden;  b PATH  bound back read-only;  w PATH  bound back read-write (applied in the
 *           order of the lines: the runtime folder hidden, the request folder bound back, its clients' folder
 *           hidden again, the run's own client folder bound back into it)
 * Pure apart from the injected FsView. Trust boundary: built outside any run, from gate-sh's own paths.
 */
import type { SandboxContext } from './bwrap-argv.js';
import { SandboxError } from './errors.js';
import { memoFs, nodeFs } from './fs-view.js';
import { isWithin, normAbs } from './mounts.js';
import { EXEC_GATE_VARIABLES } from '../protocol/index.js';

/** The environment variable gate-launch reads the lines from (and removes before the run's exec). */
export const GATE_GUARD_ENV = EXEC_GATE_VARIABLES.guard;

export function gateGuard(ctx: SandboxContext): string {
  const fs = memoFs(ctx.fs ?? nodeFs);
  const real = (p: string) => fs.realpath(p) ?? normAbs(p);
  const lines: string[] = [];
  const homes = (ctx.gateHomes ?? []).map(real);
  for (const h of homes) lines.push(`d ${h}`);
  // the rest of the protected folders: gate-sh's installation
  for (const p of ctx.protectedExtra.map(real)) if (!homes.some((h) => isWithin(p, h))) lines.push(`f ${p}`);
  for (const c of ctx.critical ?? []) {
    const p = real(c.path);
    if (!homes.some((h) => isWithin(p, h))) lines.push(`f ${p}`);
  }
  for (const h of ctx.hiddenPaths) lines.push(`h ${real(h)}`);
  if (ctx.runtimeRequestDir) {
    const req = real(ctx.runtimeRequestDir);
    lines.push(`b ${req}`);
    // the other runs' client folders out of sight too: the clients' folder empty, as in a sandbox
    // (bwrap-argv.ts requestDir), with the run's own bound back into it
    if (fs.kind(`${req}/c`) === 'dir') lines.push(`h ${req}/c`);
  }
  if (ctx.runtimeClientDir) lines.push(`w ${real(ctx.runtimeClientDir)}`);
  for (const l of lines)
    if (l.includes('\n') || !l.slice(2).startsWith('/')) throw new SandboxError(`cannot guard ${JSON.stringify(l.slice(2))}: not a plain absolute path`);
  return lines.join('\n');
}
