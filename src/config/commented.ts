/**
 * The commented config.toml `gate init` writes: every key the loader knows (TOP_KEYS, WW_KEYS in
 * config.ts), commented out, with its default (from DEFAULT_CONFIG, as `gate config get` shows it) and one
 * line of what it does. A key the loader gains without a line in KEY_DOCS is still written (with a note
 * that it is undocumented), and test/cli/yargs-cli.test.ts fails until it has one. Uncommenting any line
 * gives a valid file. Pure.
 */
import { stringify } from 'smol-toml';
import { configView, DEFAULT_CONFIG, TOP_KEYS, WW_KEYS } from './config.js';

/** What each key does; `unset`: what happens when a key without a default is left out, with an example. */
export const KEY_DOCS: Record<string, { doc: string; unset?: { means: string; example: unknown } }> = {
  approval_policy: { doc: 'when a person is asked: untrusted | on-failure | on-request | never | { reject = { sandbox_approval, rules, mcp_elicitations } }' },
  sandbox_mode: { doc: 'the turn sandbox: read-only | workspace-write | danger-full-access | external-sandbox' },
  sandbox_workspace_write: { doc: 'workspace-write: what a run may write and reach besides its cwd (always writable)' },
  autostart: { doc: 'start the daemon in the background on first use (GATE_NO_AUTOSTART=1 turns it off too)' },
  approval_timeout_ms: { doc: 'how long a prompt waits for an answer when an approver is attached' },
  rules: { doc: 'extra rule files, loaded after $GATE_HOME/rules, $CODEX_HOME/rules and $CODEX_HOME/policy' },
  git_read_only: { doc: "treat read-only git commands as known safe (Codex's historic rules)" },
  audit_log: { doc: 'the audit log (JSONL, one record per decision and run; rotates by size)' },
  risk_assessor: {
    doc: 'a program run for each prompt whose answer is shown beside it (advisory; argv, or a string for /bin/sh -c)',
    unset: { means: 'none runs', example: ['/usr/local/bin/assess-risk', '--json'] },
  },
  writable_roots: { doc: 'more folders a run may write' },
  agent_writable_roots: {
    doc: "an agent's own folders ('gate setup' adds them), writable while present, skipped while missing",
    unset: { means: 'none', example: [] },
  },
  network_access: { doc: 'whether a run reaches the network: true, false, or "rules" (through its own proxy, each new host decided: docs/network.md)' },
  network: {
    doc: 'with network_access = "rules": hosts allowed or refused without asking (*.x: subdomains; **.x: the domain too; a denial wins)',
    unset: { means: 'network_rules and prompts decide every host', example: { allowed_domains: ['registry.npmjs.org'], denied_domains: [] } },
  },
  secrets: {
    doc: 'credential locations hidden in every sandbox: more (hide) or defaults shown again (show), as ~/path or /path (gate explain lists them)',
    unset: { means: 'the default list', example: { hide: ['~/.config/my-tool/token'], show: [] } },
  },
  exclude_tmpdir_env_var: { doc: 'do not make $TMPDIR writable' },
  exclude_slash_tmp: { doc: 'do not make /tmp writable' },
};

/** `key = value` as TOML writes it, on one line: a table (network, secrets) as an inline table, so the
 * keys after it stay top-level when it is uncommented. */
function line(key: string, value: unknown): string {
  if (value !== null && typeof value === 'object' && !Array.isArray(value))
    return `${key} = { ${Object.entries(value).map(([k, v]) => line(k, v)).join(', ')} }`;
  return stringify({ [key]: value }).trim();
}

function entry(key: string, value: unknown): string[] {
  const d = KEY_DOCS[key];
  const doc = d ? d.doc : 'undocumented: see src/config/config.ts';
  if (value !== undefined) return [`# ${doc}`, `# ${line(key, value)}`];
  const unset = d?.unset;
  return [`# ${doc}${unset ? ` (unset: ${unset.means}; for example:)` : ''}`, `# ${line(key, unset ? unset.example : '')}`];
}

/**
 * The text of a commented config.toml. `auditLog` is this home's default audit log, the one default that
 * depends on where the file lives.
 */
export function commentedConfig(opts: { auditLog: string; file: string }): string {
  const view: Record<string, unknown> = { ...configView(DEFAULT_CONFIG), audit_log: opts.auditLog };
  const ww = (view.sandbox_workspace_write ?? {}) as Record<string, unknown>;
  const out = [
    `# gate-sh's configuration (${opts.file}), written by 'gate init'.`,
    '# Every key is commented out with its default: uncomment a line to change it. Precedence: these defaults,',
    '# then this file, then GATE_* variables, then daemon flags, then `gate config set` (until the daemon stops).',
    "# A running daemon reads this file when it starts: 'gate daemon restart' after a change.",
    '',
  ];
  // top-level keys first: TOML puts a table's keys after its [header]
  for (const key of TOP_KEYS) if (key !== 'sandbox_workspace_write') out.push(...entry(key, view[key]), '');
  out.push(`# ${KEY_DOCS.sandbox_workspace_write?.doc ?? 'undocumented: see src/config/config.ts'}`, '# [sandbox_workspace_write]');
  for (const key of WW_KEYS) out.push(...entry(key, ww[key]));
  return out.join('\n') + '\n';
}
