/**
 * The sandbox/ layer's public surface: other layers import from here, files inside sandbox/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: SandboxPolicy / PermissionProfile → bubblewrap argv: parsing and comparing policies, the mounts,
 * the protected and secret locations, the gate's own state inside a sandbox, joining a session sandbox,
 * the network bridge. Pure except fs-view.ts and the existence checks (they stat paths).
 */
export { BWRAP_MISSING, SandboxError } from './errors.js';
export { type FsView, nodeFs } from './fs-view.js';
export { GATE_INSTALL_ROOT, gateSandboxContext, userHomes } from './gate-context.js';
export { GATE_GUARD_ENV, gateGuard } from './gate-state.js';
export { BRIDGE_PROGRAM, bridgeCommand, networkRules, proxyEnv, runProxySocket } from './network-bridge.js';
export {
  isRestricted,
  parseSandboxPolicy,
  type PermissionProfile,
  type SandboxMode,
  type SandboxPolicy,
  SandboxPolicyError,
  workspaceWrite,
} from './policy.js';
export { missingProtected, protectedList, protectedNames } from './protected.js';
export { checkSecretEntry, existingSecrets, secretAccess, type SecretFound, secretLocations, type SecretsSetting } from './secrets.js';
export { holderMountsProblem, joinPlan, mountsKey, type SessionJoin, sessionSandboxOff, sessionShape, type SessionShape } from './session-join.js';
export { samePolicy, stricterSandbox } from './stricter.js';
export { type CommandLine, sandboxArgvFor, wrapCommand } from './wrap.js';
