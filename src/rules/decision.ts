/**
 * A rule's or heuristic's decision on one command, and how decisions rank (pure). The rule engine owns
 * the type; the request channel carries it as it is (src/protocol/messages.ts, SubcommandReply).
 */

/** A rule's or heuristic's decision on one command. Strictest wins: forbidden > prompt > allow. */
export type Decision = 'allow' | 'prompt' | 'forbidden';

const RANK: Record<Decision, number> = { allow: 0, prompt: 1, forbidden: 2 };

export function isDecision(v: unknown): v is Decision {
  return v === 'allow' || v === 'prompt' || v === 'forbidden';
}

/** The stricter of two decisions. */
export function stricter(a: Decision, b: Decision): Decision {
  return RANK[a] >= RANK[b] ? a : b;
}

/** The strictest of many decisions, or undefined for none. */
export function strictest(ds: Iterable<Decision>): Decision | undefined {
  let out: Decision | undefined;
  for (const d of ds) out = out === undefined ? d : stricter(out, d);
  return out;
}
