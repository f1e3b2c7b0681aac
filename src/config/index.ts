/**
 * The config/ layer's public surface: other layers import from here, files inside config/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: config.toml, the environment and flags into the session configuration (GateConfig), the keys `gate config`
 * sets and shows, the commented template. Reads and writes config.toml (load.ts, config.ts); the rest is pure.
 * Trust: config.toml is the user's file, read as the user.
 */
export { commentedConfig } from './commented.js';
export { knownKey, viewValue } from './config-key.js';
export {
  callerSettings,
  configFromTable,
  configView,
  DEFAULT_CONFIG,
  type GateConfig,
  setConfigValue,
  SETTABLE_KEYS,
  settingsConflict,
} from './config.js';
export { loadConfig, readConfigTable } from './load.js';
export { networkListsView } from './network.js';
