/**
 * ApprovalPolicy: when a human is asked. Codex names; `reject` booleans mean REJECT (the inverse of
 * newer Codex's `granular`, which we also accept and normalise into `reject`).
 */
export interface RejectConfig {
  sandbox_approval: boolean;
  rules: boolean;
  mcp_elicitations: boolean;
}

export type ApprovalPolicy =
  | 'untrusted'
  | 'on-failure'
  | 'on-request'
  | 'never'
  | { reject: RejectConfig };

export class ApprovalPolicyError extends Error {}

/** Parse a config/flag/wire value into an ApprovalPolicy; throws ApprovalPolicyError with the reason. */
export function parseApprovalPolicy(v: unknown): ApprovalPolicy {
  if (v === 'untrusted' || v === 'on-failure' || v === 'on-request' || v === 'never') return v;
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    if ('reject' in o) return { reject: readFlags(o.reject, 'reject', false) };
    if ('granular' in o) {
      // granular booleans mean ALLOW prompts of that kind; reject means the opposite.
      const g = readFlags(o.granular, 'granular', true);
      return { reject: { sandbox_approval: !g.sandbox_approval, rules: !g.rules, mcp_elicitations: !g.mcp_elicitations } };
    }
  }
  throw new ApprovalPolicyError(
    `invalid approval policy ${JSON.stringify(v)}: expected untrusted, on-failure, on-request, never or {reject: {sandbox_approval, rules, mcp_elicitations}}`,
  );
}

function readFlags(v: unknown, what: string, dflt: boolean): RejectConfig {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ApprovalPolicyError(`invalid approval policy: ${what} must be a table`);
  const o = v as Record<string, unknown>;
  const known = new Set(['sandbox_approval', 'rules', 'mcp_elicitations', 'skill_approval', 'request_permissions']);
  for (const k of Object.keys(o)) {
    if (!known.has(k)) throw new ApprovalPolicyError(`invalid approval policy: unknown key ${what}.${k}`);
    if (typeof o[k] !== 'boolean') throw new ApprovalPolicyError(`invalid approval policy: ${what}.${k} must be a boolean`);
  }
  const get = (k: keyof RejectConfig) => (typeof o[k] === 'boolean' ? (o[k] as boolean) : dflt);
  return { sandbox_approval: get('sandbox_approval'), rules: get('rules'), mcp_elicitations: get('mcp_elicitations') };
}

export function formatApprovalPolicy(p: ApprovalPolicy): string {
  return typeof p === 'string' ? p : `reject(${JSON.stringify(p.reject)})`;
}
