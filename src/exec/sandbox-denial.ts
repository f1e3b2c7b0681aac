/**
 * Did a sandboxed attempt fail BECAUSE of the sandbox? (Codex `is_likely_sandbox_denied`, plus network.)
 * Pure: exit status and the tail of stderr. Used for the on-failure rerun: a denial is offered to the
 * approver as an escalation. A false positive costs a prompt; a false negative only a missed offer.
 */
export type DenialKind = 'read-only-fs' | 'permission' | 'network';

export interface Denial {
  kind: DenialKind;
  /** the stderr line that shows it, for the prompt's reason */
  evidence: string;
}

const PATTERNS: ReadonlyArray<readonly [DenialKind, RegExp]> = [
  ['read-only-fs', /read-only file system|\bEROFS\b/i],
  [
    'network',
    /network is unreachable|\bENETUNREACH\b|could not resolve host|temporary failure in name resolution|name or service not known|\bEAI_AGAIN\b|failed to resolve|no address associated with hostname/i,
  ],
  ['permission', /operation not permitted|permission denied|\bEACCES\b|\bEPERM\b|failed to write file/i],
];

/**
 * 0 is success; 126/127 are "cannot execute"/"not found" from the shell (not the sandbox); a denial needs
 * evidence on stderr. `narrowed`: gate-sh itself ran the attempt in a sandbox stricter than the turn's (a
 * script decided per exec runs read-only), so a write it refused is gate-sh's doing and is a denial even
 * when the script exits 0 (`touch x; echo done`); only a read-only file system counts then — that is what
 * the narrowing causes, while "permission denied" lines are common in scripts that succeed.
 */
export function sandboxDenial(status: number, stderrTail: string, narrowed = false): Denial | null {
  if (status === 127) return null;
  if (status === 0 && !narrowed) return null;
  // the exec gate said no (its EACCES reads like a permission denial): a policy decision, not the
  // sandbox's — offering to rerun it outside the sandbox would re-ask a question already answered
  if (/^gate-sh: denied: /m.test(stderrTail)) return null;
  const lines = stderrTail.split('\n').reverse();
  for (const [kind, re] of status === 0 ? PATTERNS.filter(([k]) => k === 'read-only-fs') : PATTERNS) {
    const line = lines.find((l) => re.test(l));
    if (line !== undefined) return { kind, evidence: line.trim().slice(0, 300) };
  }
  return null;
}

export function denialReason(d: Denial): string {
  const what =
    d.kind === 'network'
      ? 'no network in the sandbox'
      : d.kind === 'read-only-fs'
        ? 'read-only file system in the sandbox'
        : 'permission denied in the sandbox';
  return `${what}: ${d.evidence}`;
}
