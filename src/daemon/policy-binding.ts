/**
 * Binds the daemon to the policy engine: how rule files are found and loaded (for hot reload), how a
 * Policy becomes a Decider (pre-flight and exec-gate decisions), and how amendments are appended.
 */
import { join } from 'node:path';
import { codexHome, defaultRulesFile, gateHome, loadPolicy } from '../policy/load.js';
import { appendAllowPrefixRule, formatAllowPrefixRule } from '../policy/amend.js';
import type { Policy } from '../policy/policy.js';
import type { Env } from '../protocol/paths.js';
import { wholeScriptDecider } from './whole-script-decider.js';
import type { Decider } from './decide.js';
import type { PolicyLoader } from './policy-watch.js';

export interface BindingOptions {
  env: Env;
  extraFiles: string[];
  gitReadOnly(): boolean;
}

export interface PolicyBinding {
  loader: PolicyLoader<unknown>;
  deciderFor(p: unknown): Decider;
  /** append the allow rule to the default rules file; resolves with the rule line */
  amend(prefix: string[]): Promise<string>;
  amendmentFile: string;
}

export function policyBinding(o: BindingOptions): PolicyBinding {
  const loader: PolicyLoader<unknown> = {
    load: () => loadPolicy({ env: o.env, extraFiles: o.extraFiles }),
    // the folders loadPolicy reads (watched even before they exist) and the extra files
    watchPaths: () => [join(gateHome(o.env), 'rules'), join(codexHome(o.env), 'rules'), join(codexHome(o.env), 'policy'), ...o.extraFiles],
    files: (p) => (p as Policy).files,
  };
  const amendmentFile = defaultRulesFile(o.env);
  return {
    loader,
    deciderFor: (p) => policyDecider(p as Policy),
    amend: async (prefix) => {
      await appendAllowPrefixRule(amendmentFile, prefix);
      return formatAllowPrefixRule(prefix);
    },
    amendmentFile,
  };
}

function policyDecider(policy: Policy): Decider {
  return { ...wholeScriptDecider, name: `${wholeScriptDecider.name}; ${policy.ruleCount} rules loaded` };
}
