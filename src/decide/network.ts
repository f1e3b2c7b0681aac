/**
 * One decision per new host:port a sandboxed run connects to (docs/network-decisions.md), in this order, first answer wins:
 *   1. a `network_rule` forbids the host (rules compile as Codex's: last writer per host, deny wins) → deny
 *   2. a `denied_domains` pattern matches → deny                                  (deny wins over any allow)
 *   3. the destination is not public (loopback, private, link-local, ...: a literal, a `localhost` name, or
 *      an address the proxy resolved) and no allow rule or `allowed_domains` entry names the host exactly
 *      → deny, never asked (no prompt and no grant opens it: Codex's `not_allowed_local`)
 *   4. a `network_rule(decision="prompt")` names the host → ask (a grant of this run or session answers it)
 *   5. an allow `network_rule` or an `allowed_domains` pattern → allow
 *   6. a grant: approved for this run (it ends with the run), or for the session → allow
 *   7. otherwise ask, as the approval policy says: `never` and `reject.sandbox_approval` (`reject.rules`
 *      for a prompt rule) deny at once; untrusted, on-request and on-failure ask a person (for the network
 *      the refused connection is the failure, so on-failure asks as on-request does).
 * A rule's protocol is kept and shown but, as in Codex, a host's rule covers every protocol and port.
 * Pure: the daemon (src/daemon/network-decider.ts) brings the rules, lists, grants and policy.
 */
import { compileDomains, formatNetworkRule, type NetworkProtocol, type NetworkRule } from '../rules/index.js';
import type { SandboxPolicy } from '../sandbox/index.js';
import type { ApprovalPolicy } from './approval-policy.js';
import { nonPublicDestination, nonPublicReason, type AddressClass } from './network-address.js';
import { patternMatches, type DomainPattern } from './network-pattern.js';

export interface NetworkLists {
  allowed: readonly DomainPattern[];
  denied: readonly DomainPattern[];
}

export const NO_NETWORK_LISTS: NetworkLists = { allowed: [], denied: [] };

export interface NetworkRequest {
  /** canonical host (lower case, no trailing dot, IPv6 without brackets) */
  host: string;
  port: number;
  protocol: NetworkProtocol;
  /** addresses the proxy resolved the host to; [] for a literal, or when asked before resolving */
  addresses: readonly string[];
}

export interface NetworkDecideInput extends NetworkRequest {
  rules: readonly NetworkRule[];
  lists: NetworkLists;
  /** a grant already given for this host:port: to this run, or to the session */
  granted?: 'run' | 'session';
  approvalPolicy: ApprovalPolicy;
}

export type NetworkSource = 'rule' | 'config' | 'granted-run' | 'granted-session' | 'policy' | 'default';

export interface NetworkDecision {
  decision: 'allow' | 'deny' | 'ask';
  source: NetworkSource;
  /** one line for a person (why allowed, denied, or asked) */
  reason: string;
  /** `file:line` of the deciding network_rule */
  rule?: string;
  /** the deciding config pattern, as written */
  pattern?: string;
  /** an allow rule or allowed_domains entry names this host exactly: its addresses may be non-public */
  namesHost: boolean;
  /** the non-public destination that decided a denial */
  nonPublic?: { address: string; class: AddressClass };
}

function where(r: NetworkRule | undefined): string | undefined {
  return r?.source ? `${r.source.file}:${r.source.line}` : undefined;
}

/** The last rule for the host with this decision (the one compileDomains kept). */
function lastRule(rules: readonly NetworkRule[], host: string, decision: NetworkRule['decision']): NetworkRule | undefined {
  for (let i = rules.length - 1; i >= 0; i--) if (rules[i].host === host && rules[i].decision === decision) return rules[i];
  return undefined;
}

export function decideNetwork(i: NetworkDecideInput): NetworkDecision {
  const { host } = i;
  const compiled = compileDomains(i.rules);
  if (compiled.denied.includes(host)) {
    const r = lastRule(i.rules, host, 'forbidden');
    const why = r?.justification ? `: ${r.justification}` : '';
    return { decision: 'deny', source: 'rule', rule: where(r), reason: `a network_rule forbids ${host}${r?.source ? ` (${where(r)})` : ''}${why}`, namesHost: false };
  }
  const denied = i.lists.denied.find((p) => patternMatches(p, host));
  if (denied) return { decision: 'deny', source: 'config', pattern: denied.text, reason: `denied by the configuration's denied_domains '${denied.text}'`, namesHost: false };
  const ruleAllows = compiled.allowed.includes(host);
  const exactEntry = i.lists.allowed.find((p) => p.kind === 'exact' && p.domain === host);
  const namesHost = ruleAllows || exactEntry !== undefined;
  const nonPublic = nonPublicDestination(host, i.addresses);
  if (nonPublic && !namesHost) {
    return { decision: 'deny', source: 'policy', reason: nonPublicReason(host, nonPublic), namesHost, nonPublic };
  }
  const promptRule = lastRule(i.rules, host, 'prompt');
  if (!promptRule) {
    if (ruleAllows) {
      const r = lastRule(i.rules, host, 'allow');
      return { decision: 'allow', source: 'rule', rule: where(r), reason: `allowed by a network_rule${r?.source ? ` (${where(r)})` : ''}`, namesHost };
    }
    const allowed = i.lists.allowed.find((p) => patternMatches(p, host));
    if (allowed) return { decision: 'allow', source: 'config', pattern: allowed.text, reason: `allowed by the configuration's allowed_domains '${allowed.text}'`, namesHost };
  }
  if (i.granted === 'run') return { decision: 'allow', source: 'granted-run', reason: `${host}:${i.port} was approved for this run`, namesHost };
  if (i.granted === 'session') return { decision: 'allow', source: 'granted-session', reason: `${host}:${i.port} was approved for this session`, namesHost };
  const askedBy = promptRule ? `a network_rule asks about ${host} (${where(promptRule) ?? 'in memory'})` : `no network_rule or allowed_domains entry allows ${host}`;
  const refusal = askRefusal(i.approvalPolicy, promptRule !== undefined);
  if (refusal) return { decision: 'deny', source: 'policy', rule: where(promptRule), reason: `${askedBy}, and ${refusal}`, namesHost };
  return { decision: 'ask', source: promptRule ? 'rule' : 'default', rule: where(promptRule), reason: askedBy, namesHost };
}

/** Why the approval policy lets nobody be asked, or undefined when a person may be. */
function askRefusal(p: ApprovalPolicy, byRule: boolean): string | undefined {
  if (p === 'never') return 'approval_policy "never" asks nobody';
  if (typeof p === 'object') {
    if (byRule && p.reject.rules) return 'approval_policy rejects prompts raised by rules (reject.rules)';
    if (p.reject.sandbox_approval) return 'approval_policy rejects sandbox approvals (reject.sandbox_approval)';
  }
  return undefined;
}

/**
 * The network setting of a run under this sandbox policy: `on` (no sandbox, or network_access on), `off`,
 * or `rules` (the proxy asks the daemon per connection). Read loosely: the "rules" value is the proxy's,
 * whichever spelling of the policy carries it.
 */
export function networkSetting(p: SandboxPolicy): 'on' | 'off' | 'rules' {
  if (p.type === 'danger-full-access') return 'on';
  const n = (p as { network_access?: unknown }).network_access;
  if (n === 'rules') return 'rules';
  return n === true || n === 'enabled' ? 'on' : 'off';
}

/** What `gate explain` lists about the network of a script's run: the setting, each rule, each list. Pure. */
export function formatNetworkExplanation(setting: string, rules: readonly NetworkRule[], lists: NetworkLists): string[] {
  const out = [`network: ${setting}`];
  if (setting !== 'rules') {
    out.push(
      setting === 'off'
        ? '  (no connection leaves the sandbox; the rules below apply when the network setting is "rules")'
        : '  (every connection is let through; the rules below apply when the network setting is "rules")',
    );
  }
  if (rules.length === 0) out.push('  network rules: none');
  else {
    out.push(`  network rules (${rules.length}; per host, the last allow/forbidden wins, a forbidden host is always refused):`);
    for (const r of rules) out.push(`    ${r.source ? `${r.source.file}:${r.source.line}` : '<memory>'}  ${formatNetworkRule(r)}`);
  }
  out.push(`  allowed_domains: ${lists.allowed.length ? lists.allowed.map((p) => p.text).join(' ') : 'none'}`);
  out.push(`  denied_domains: ${lists.denied.length ? lists.denied.map((p) => p.text).join(' ') : 'none'}`);
  out.push('  a host none of these allows is asked (this run / this session / save a network_rule); loopback, private and link-local');
  out.push('  destinations are refused unless a network_rule or allowed_domains entry names the host exactly');
  return out;
}
