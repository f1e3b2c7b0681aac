/**
 * `gate explain`: why a script gets its decisions, per subcommand — words, the rule (file:line) or the
 * heuristic, the decision, the action and execution mode, the proposed amendment; for a complex script why
 * it is complex and which literal commands were found. `--json` prints the ScriptDecision (docs/explain.md).
 * Options: src/cli/args/explain.ts.
 */
import { loadPolicy } from '../../rules/index.js';
import {
  decideInvocation,
  decideScript,
  formatApprovalPolicy,
  formatExplanation,
  formatNetworkExplanation,
  networkSetting,
  parseApprovalPolicy,
  type ApprovalPolicy,
} from '../../decide/index.js';
import { callerSettings, type GateConfig, loadConfig, networkListsView, settingsConflict } from '../../config/index.js';
import { parseSandboxPolicy, protectedList, type SandboxPolicy } from '../../sandbox/index.js';
import type { SandboxPermissions } from '../../protocol/index.js';
import { approvalCall } from '../../client/index.js';
import { gatePaths } from '../../paths/index.js';
import { sourceReader } from '../../script/index.js';
import { hiddenSecrets, hiddenSecretsLine } from './explain-secrets.js';

const SHELLS = /(^|\/)(gate-sh|bash|sh|zsh)$/;
const PERMISSIONS: readonly SandboxPermissions[] = ['use_default', 'require_escalated', 'with_additional_permissions'];

/** Options, as src/cli/args/explain.ts declares them. */
export interface ExplainArgs {
  /** a script (one word) or a command */
  words: string[];
  rules: string[];
  noDefaultRules: boolean;
  approvalPolicy?: string;
  sandbox?: string;
  sandboxPermissions?: string;
  prefixRule?: string;
  gitReadOnly: boolean;
  json: boolean;
}

export async function run(args: ExplainArgs): Promise<number> {
  const words = args.words;
  // The session configuration the daemon would use (config.toml ← environment), then these flags.
  let config: GateConfig;
  try {
    config = loadConfig({ file: gatePaths(process.env).configFile, env: process.env });
  } catch (e) {
    process.stderr.write(`gate: ${(e as Error).message}\n`);
    return 1;
  }
  // A running daemon's settings are the ones a run gets: explain with those, and refuse what gate-sh refuses.
  if (args.approvalPolicy === undefined && args.sandbox === undefined) {
    const paths = gatePaths(process.env);
    const running = await daemonConfig(paths);
    if (running) {
      config = { ...config, ...running };
      const asked = callerSettings(process.env);
      const conflict = asked && settingsConflict(config, asked, paths.session);
      if (conflict) {
        process.stderr.write(`gate: explain: ${conflict}; gate-sh refuses to run anything so\n`);
        return 1;
      }
    }
  }
  let approvalPolicy: ApprovalPolicy;
  let sandboxPolicy: SandboxPolicy;
  let prefixRule: string[] | null = null;
  const sandboxPermissions = (args.sandboxPermissions ?? 'use_default') as SandboxPermissions;
  try {
    approvalPolicy = args.approvalPolicy !== undefined ? parseApprovalPolicy(args.approvalPolicy) : config.approval_policy;
    sandboxPolicy = args.sandbox !== undefined ? parseSandboxPolicy(args.sandbox) : config.sandbox_policy;
    if (!PERMISSIONS.includes(sandboxPermissions)) throw new Error(`invalid --sandbox-permissions '${sandboxPermissions}': expected ${PERMISSIONS.join(', ')}`);
    if (args.prefixRule !== undefined) prefixRule = parsePrefixRule(args.prefixRule);
  } catch (e) {
    process.stderr.write(`gate: explain: ${(e as Error).message}\n`);
    return 2;
  }
  let policy;
  try {
    const extraFiles = args.noDefaultRules ? args.rules : [...config.rules, ...args.rules];
    policy = loadPolicy({ env: process.env, extraFiles, includeDefaults: !args.noDefaultRules });
  } catch (e) {
    process.stderr.write(`gate: ${(e as Error).message}\n`);
    return 1;
  }
  // One argument is a script (as `bash -lc`); several are an argv (a shell invocation or a program).
  const command = words.length === 1 ? ['bash', '-lc', words[0]] : words;
  // files the script sources are read as the daemon reads them
  const ctx = {
    policy,
    approvalPolicy,
    sandboxPolicy,
    sandboxPermissions,
    prefixRule,
    gitReadOnly: args.gitReadOnly || config.git_read_only,
    readSource: sourceReader({ hidden: [gatePaths(process.env).runtime] }).read,
    cwd: process.cwd(),
  };
  // `gate-sh -c '...'` (or a shell at any path) is explained as the script it runs.
  const shellScript = command.length === 3 && (command[1] === '-c' || command[1] === '-lc') && SHELLS.test(command[0]);
  const decided = shellScript ? decideScript(command[0], command[1] as '-c' | '-lc', command[2], ctx) : decideInvocation(command, ctx);
  if (args.json) {
    const out = {
      ...decided,
      context: { approval_policy: approvalPolicy, sandbox_policy: sandboxPolicy, sandbox_permissions: sandboxPermissions, rule_files: [...policy.files] },
      protected_paths: protectedList(process.env),
      // the network of the script's run: the setting, the network rules and the config lists
      network: {
        setting: networkSetting(sandboxPolicy),
        rules: policy.networkRuleList().map((r) => ({ ...r, source: r.source ? `${r.source.file}:${r.source.line}` : undefined })),
        allowed_domains: networkListsView(config.network_domains)?.allowed_domains ?? [],
        denied_domains: networkListsView(config.network_domains)?.denied_domains ?? [],
      },
      hidden_secrets: hiddenSecrets(sandboxPolicy, config.secrets, process.env),
    };
    process.stdout.write(JSON.stringify(out) + '\n');
  } else {
    process.stdout.write(
      formatExplanation(decided, { approvalPolicy: formatApprovalPolicy(approvalPolicy), sandbox: sandboxPolicy.type, ruleFiles: [...policy.files] }) +
        // read-only in every writable root; made by a run where missing, moved aside when it ends (docs/sandbox.md)
        `protected paths (add names with GATE_PROTECTED_NAMES): ${protectedList(process.env).join(' ')}\n` +
        formatNetworkExplanation(networkSetting(sandboxPolicy), policy.networkRuleList(), config.network_domains).join('\n') +
        '\n' +
        hiddenSecretsLine(sandboxPolicy, config.secrets, process.env),
    );
  }
  return 0;
}

/** The running daemon's session settings, or undefined when none answers. */
async function daemonConfig(paths: ReturnType<typeof gatePaths>): Promise<Partial<GateConfig> | undefined> {
  try {
    const s = (await approvalCall(paths, 'status')).status as { sandbox_policy?: SandboxPolicy; config?: Record<string, unknown> };
    if (!s.sandbox_policy || !s.config) return undefined;
    return {
      sandbox_policy: s.sandbox_policy,
      approval_policy: s.config.approval_policy as ApprovalPolicy,
      git_read_only: s.config.git_read_only === true,
      rules: Array.isArray(s.config.rules) ? (s.config.rules as string[]) : [],
      secrets: s.config.secrets as GateConfig['secrets'],
    };
  } catch {
    return undefined;
  }
}

function parsePrefixRule(text: string): string[] {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`invalid --prefix-rule ${JSON.stringify(text)}: expected a JSON list of strings`);
  }
  if (!Array.isArray(v) || v.some((t) => typeof t !== 'string'))
    throw new Error(`invalid --prefix-rule ${JSON.stringify(text)}: expected a JSON list of strings`);
  return v as string[];
}
