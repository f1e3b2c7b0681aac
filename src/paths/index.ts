/**
 * The paths/ layer's public surface: other layers import from here, files inside paths/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: where gate-sh's files and sockets are: GATE_HOME, CODEX_HOME, the runtime folder, a session's
 * sockets, and the checks that a socket path fits and a private folder is private. Pure except those checks
 * (they stat the folders).
 */
export {
  checkSocketPath,
  checkSocketPaths,
  codexHome,
  type Env,
  gateHome,
  gatePaths,
  type GatePaths,
  homeDir,
  isRunFolderName,
  MAX_SOCKET_PATH,
  NOTICE_SOCK,
  ownClientDir,
  privateDirProblem,
  replyFolder,
  runClientDir,
  RUNTIME_LAYOUT,
  STOP_NOTE_FILE,
} from './paths.js';
