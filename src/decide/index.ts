/**
 * gate-sh's own decisions, on top of the rule language (src/rules/): a script's subcommands at pre-flight
 * (decideScript), one intercepted exec (decideIntercepted), an exec of the start-up phase, with Codex's
 * unmatched-command fallback, requirement texts, available decisions, amendment proposals and the
 * session-approval key; and the cached Decider that turns each into the one SubcommandResult the daemon
 * acts on and puts on the wire. This index is the layer's public surface. Pure: what the daemon reads for
 * a decision (sourced files, skills, program identity) comes in through DeciderIo.
 * One word for the act: decide. "Risk assessment" is the risk assessor's (src/integrations/), not this.
 */
export { decideInvocation, decideScript } from './script.js';
export type { DecideContext, DecidedBy, DecidedCommand, HeuristicName, ScriptDecision, SubcommandDecision } from './types.js';
export { decideIntercepted, type InterceptedContext, type InterceptedDecision } from './intercepted.js';
export { decideStartUpExec } from './start-up.js';
export { policyDecider, type DeciderIo, type SourceReading } from './decider.js';
export { toResult } from './result.js';
export { sourceLabel, type Decider, type ExecContext, type ScriptResult, type SessionPolicies, type SubcommandResult } from './decider-types.js';
export { formatApprovalPolicy, parseApprovalPolicy, ApprovalPolicyError, type ApprovalPolicy } from './approval-policy.js';
export { approvalKey } from './approval-key.js';
export { formatExplanation, type FormatContext } from './explain-format.js';
export { reusableForAnyArgv, argvDecides, type ReuseInput } from './reuse.js';
export {
  decideNetwork,
  formatNetworkExplanation,
  networkSetting,
  NO_NETWORK_LISTS,
  type NetworkDecideInput,
  type NetworkDecision,
  type NetworkLists,
  type NetworkRequest,
  type NetworkSource,
} from './network.js';
export { parseDomainList, parseDomainPattern, patternMatches, type DomainPattern } from './network-pattern.js';
export { addressClass, ipLiteral, nonPublicDestination, nonPublicReason, type AddressClass } from './network-address.js';
export { writableRootsFor } from './exec-writable.js';
export { belowProgram, ownFilesByName, provenanceOf, type Ancestor, type Ancestry } from './provenance.js';
export { kernelCommand, type KernelCommand, SCRIPT_HEAD_BYTES } from './shebang.js';
