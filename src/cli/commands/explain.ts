/**
 * `gate explain`: why a script gets its decisions, per subcommand — words, the rule (file:line) or the
 * heuristic, the decision, the action and execution mode, the proposed amendment; for a complex script why
 * it is complex and which literal commands were found. `--json` prints the ScriptDecision (docs/explain.md).
 * Not on the hot path, but kept lean: node:util parseArgs, no yargs.
 */
import { parseArgs } from 'node:util';
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
import { networkListsView } from '../../config/network.js';
import { parseSandboxPolicy, type SandboxPermissions, type SandboxPolicy } from '../../sandbox/policy.js';
import { loadConfig } from '../../config/load.js';
import { callerSettings, settingsConflict, type GateConfig } from '../../config/config.js';
import { approvalCall } from '../../client/approval-client.js';
import { gatePaths } from '../../protocol/paths.js';
import { sourceReader } from '../../daemon/sourced-files.js';
import { protectedList } from '../../sandbox/protected.js';
import { hiddenSecrets, hiddenSecretsLine } from './explain-secrets.js';

const USAGE = `usage: gate explain [options] -- <shell> -c|-lc '<script>'
       gate explain [options] '<script>'          (a bare script: as bash -lc)
       gate explain [options] -- <program> [args...]

options:
  --rules FILE               extra rule file (repeatable), after the default rule folders and config 'rules'
  --no-default-rules         only the --rules files
  --approval-policy P        untrusted | on-failure | on-request | never
  --sandbox S                read-only | workspace-write | danger-full-access | external-sandbox
Defaults are the running daemon's settings (as 'gate status' shows them), else the session configuration
($GATE_HOME/config.toml, then GATE_* variables) a daemon would start with; the flags override them. With a
daemon running, GATE_SANDBOX_MODE / GATE_APPROVAL_POLICY other than its own are refused, as gate-sh refuses them.
  --sandbox-permissions X    use_default | require_escalated | with_additional_permissions
  --prefix-rule JSON         a requested prefix rule, e.g. '["cargo","install"]'
  --git-read-only            treat read-only git commands as known safe (historic Codex rules)
  --json                     one JSON object (stable; see docs/explain.md)
`;

const SHELLS = /(^|\/)(gate-sh|bash|sh|zsh)$/;
const PERMISSIONS: readonly SandboxPermissions[] = ['use_default', 'require_escalated', 'with_additional_permissions'];

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        rules: { type: 'string', multiple: true, short: 'r' },
        'no-default-rules': { type: 'boolean' },
        'approval-policy': { type: 'string' },
        sandbox: { type: 'string' },
        'sandbox-permissions': { type: 'string' },
        'prefix-rule': { type: 'string' },
        'git-read-only': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    process.stderr.write(`gate-sh: explain: ${(e as Error).message}\n${USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const words = parsed.positionals;
  if (words.length === 0) {
    process.stderr.write(`gate-sh: explain: nothing to explain\n${USAGE}`);
    return 2;
  }
  // The session configuration the daemon would use (config.toml ← environment), then these flags.
  let config: GateConfig;
  try {
    config = loadConfig({ file: gatePaths(process.env).configFile, env: process.env });
  } catch (e) {
    process.stderr.write(`gate-sh: ${(e as Error).message}\n`);
    return 1;
  }
  // A running daemon's settings are the ones a run gets: explain with those, and refuse what gate-sh refuses.
  if (v['approval-policy'] === undefined && v.sandbox === undefined) {
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
  const sandboxPermissions = (v['sandbox-permissions'] ?? 'use_default') as SandboxPermissions;
  try {
    approvalPolicy = v['approval-policy'] !== undefined ? parseApprovalPolicy(v['approval-policy']) : config.approval_policy;
    sandboxPolicy = v.sandbox !== undefined ? parseSandboxPolicy(v.sandbox) : config.sandbox_policy;
    if (!PERMISSIONS.includes(sandboxPermissions)) throw new Error(`invalid --sandbox-permissions '${sandboxPermissions}': expected ${PERMISSIONS.join(', ')}`);
    if (v['prefix-rule'] !== undefined) prefixRule = parsePrefixRule(v['prefix-rule']);
  } catch (e) {
    process.stderr.write(`gate-sh: explain: ${(e as Error).message}\n`);
    return 2;
  }
  let policy;
  try {
    const extraFiles = v['no-default-rules'] ? (v.rules ?? []) : [...config.rules, ...(v.rules ?? [])];
    policy = loadPolicy({ env: process.env, extraFiles, includeDefaults: !v['no-default-rules'] });
  } catch (e) {
    process.stderr.write(`gate-sh: ${(e as Error).message}\n`);
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
    gitReadOnly: v['git-read-only'] === true || config.git_read_only,
    readSource: sourceReader({ hidden: [gatePaths(process.env).runtime] }).read,
    cwd: process.cwd(),
  };
  // `gate-sh -c '...'` (or a shell at any path) is explained as the script it runs.
  const shellScript = command.length === 3 && (command[1] === '-c' || command[1] === '-lc') && SHELLS.test(command[0]);
  const assessment = shellScript ? decideScript(command[0], command[1] as '-c' | '-lc', command[2], ctx) : decideInvocation(command, ctx);
  if (v.json) {
    const out = {
      ...assessment,
      context: { approval_policy: approvalPolicy, sandbox_policy: sandboxPolicy, sandbox_permissions: sandboxPermissions, rule_files: [...policy.files] },
      protected_paths: protectedList(process.env),
      // the network of the script's run (issue 33): the setting, the network rules and the config lists
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
      formatExplanation(assessment, { approvalPolicy: formatApprovalPolicy(approvalPolicy), sandbox: sandboxPolicy.type, ruleFiles: [...policy.files] }) +
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
