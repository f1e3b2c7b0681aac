/**
 * The Codex rule language (execpolicy `.rules` files: prefix_rule, network_rule, host_executable), alone:
 * parsing and checking rule files, matching a command against the rules, appending amendments. This index
 * is the layer's public surface: other layers import from here. Pure, except load.ts (reads rule files)
 * and amend.ts (appends to one under a lock). Trust boundary: rule files are the user's, read as the
 * user; every problem in them is one PolicyError, located where the place is known.
 * Nothing here knows gate-sh's decisions (src/decide/) or any channel: the wire (src/protocol/, above this
 * layer) carries the rules' Decision as it is.
 */
export { isDecision, stricter, strictest, type Decision } from './decision.js';
export { PolicyError, type Location } from './error.js';
export {
  Policy,
  isPolicyMatch,
  type Evaluation,
  type Fallback,
  type HeuristicsRuleMatch,
  type MatchOptions,
  type PolicyParts,
  type PrefixRuleMatch,
  type RuleMatch,
  type RuleSource,
} from './policy.js';
export type { PrefixRule } from './rule.js';
export type { NetworkProtocol, NetworkRule } from './network.js';
export { normalizeHost } from './network.js';
export { compileDomains } from './network.js';
export { parsePolicy, type ParseOptions, type PolicySource } from './parser.js';
export { defaultRulesFile, loadPolicy, MAX_RULES_FILE_BYTES, readRulesFile, ruleFiles, type LoadOptions } from './load.js';
export {
  appendAllowPrefixRule,
  appendNetworkRule,
  appendPrefixRule,
  formatAllowPrefixRule,
  formatNetworkRule,
  formatPrefixRule,
  type NetworkAmendment,
} from './amend.js';
export { formatCheckOutput } from './codex-json.js';
export { shlexJoin, shlexQuote, shlexSplit } from './shlex.js';
