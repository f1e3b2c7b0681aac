/**
 * `gate explain`'s lines about the credential locations every sandbox hides (src/sandbox/secrets.ts,
 * docs/secrets.md): the ones that exist now and apply to a run under this sandbox policy. Reads the
 * filesystem (which exist, their real paths) and the password database; nothing runs.
 */
import { existingSecrets, nodeFs, type SandboxPolicy, type SecretFound, secretLocations, type SecretsSetting, userHomes } from '../../sandbox/index.js';

/** No sandbox, nothing hidden: danger-full-access, and an external sandbox with network (not wrapped). */
function unwrapped(policy: SandboxPolicy): boolean {
  return policy.type === 'danger-full-access' || (policy.type === 'external-sandbox' && policy.network_access === 'enabled');
}

export function hiddenSecrets(policy: SandboxPolicy, setting: SecretsSetting | undefined, env: Record<string, string | undefined>): SecretFound[] {
  if (unwrapped(policy)) return [];
  return existingSecrets(secretLocations({ homes: userHomes(env), env, setting, fs: nodeFs }), nodeFs);
}

export function hiddenSecretsLine(policy: SandboxPolicy, setting: SecretsSetting | undefined, env: Record<string, string | undefined>): string {
  const head = 'hidden secrets (empty inside every sandbox; a --with-permissions read or write of one is asked; [secrets] in config.toml):';
  if (unwrapped(policy)) return `${head} none: ${policy.type} runs without a sandbox here, nothing is hidden\n`;
  const found = hiddenSecrets(policy, setting, env);
  const shown = found.map((f) => (f.real === f.path ? f.path : `${f.path} (-> ${f.real})`));
  return `${head} ${shown.length ? shown.join(' ') : 'none exist'}\n`;
}
