/**
 * The wire forms of sandboxing: what the request and approval channels carry of the turn's sandbox
 * (WireSandboxPolicy), one run's explicit permissions (WirePermissionProfile) and the `[secrets]` setting
 * (WireSecretsSetting), and what a caller asked for one command (SandboxPermissions, a request field only).
 * Codex names and shapes (serde tag `type`, kebab-case). The sandbox's own types are src/sandbox/'s
 * (SandboxPolicy, PermissionProfile, SecretsSetting), above this layer; today they are these shapes, and
 * src/sandbox/policy.ts pins that they stay the same until a conversion is written. Types only; a value
 * from a socket becomes a SandboxPolicy through src/sandbox/policy.ts's parseSandboxPolicy.
 */
export type WireSandboxPolicy =
  | { type: 'danger-full-access' }
  | { type: 'read-only' }
  | { type: 'external-sandbox'; network_access: 'restricted' | 'enabled' }
  | {
      type: 'workspace-write';
      writable_roots: string[];
      agent_writable_roots?: string[];
      network_access: boolean | 'rules';
      exclude_tmpdir_env_var: boolean;
      exclude_slash_tmp: boolean;
    };

export interface WirePermissionProfile {
  network?: boolean;
  file_system?: { read?: string[]; write?: string[] };
}

/** What a caller asked for one command (Codex `sandbox_permissions`). */
export type SandboxPermissions = 'use_default' | 'require_escalated' | 'with_additional_permissions';

export interface WireSecretsSetting {
  hide?: string[];
  show?: string[];
}
