/**
 * The wire names of sandboxing (DESIGN's names): SandboxPolicy (the turn's sandbox), PermissionProfile
 * (explicit permissions for one run) and SandboxPermissions (what a caller asked for one command). Codex
 * names and shapes (serde tag `type`, kebab-case). Types only: parsing and checking them is
 * src/sandbox/policy.ts's job. Declared here so that protocol/ imports nothing above it.
 */
export type NetworkAccess = 'restricted' | 'enabled';

export type SandboxPolicy =
  | { type: 'danger-full-access' }
  | { type: 'read-only' }
  | { type: 'external-sandbox'; network_access: NetworkAccess }
  | {
      type: 'workspace-write';
      writable_roots: string[];
      /** an agent's own folders (`gate setup`): writable when present, skipped when missing, never
       * created: folders their agent deletes and re-creates (a missing `writable_roots` entry is an error) */
      agent_writable_roots?: string[];
      /** true: the host's network; false: none (loopback only); 'rules': none but a proxy of the daemon's that
       * decides each new host:port (docs/network.md) */
      network_access: boolean | 'rules';
      exclude_tmpdir_env_var: boolean;
      exclude_slash_tmp: boolean;
    };

export type SandboxMode = SandboxPolicy['type'];

/** Explicit permissions: exactly these, nothing wider. Paths absolute once resolved. */
export interface PermissionProfile {
  network?: boolean;
  file_system?: { read?: string[]; write?: string[] };
}

/** What a caller asked for one command (Codex `sandbox_permissions`). */
export type SandboxPermissions = 'use_default' | 'require_escalated' | 'with_additional_permissions';

/** The user's change to the credential locations every sandbox hides (config.toml `[secrets]`,
 * src/sandbox/secrets.ts): `hide` adds `~/path` or `/path` entries, `show` takes defaults away. */
export interface SecretsSetting {
  hide?: string[];
  show?: string[];
}
