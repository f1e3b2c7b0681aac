/**
 * The script/ layer's public surface: other layers import from here, files inside script/ import each other
 * directly (never this index, so no import cycle runs through it).
 * The layer: bash text into plain subcommands or a complex script: the analysis, the wrapper and shell detection,
 * the Codex-compatible parses, the parsers' code cache, and reading the files a script sources
 * (sourced-files.ts, the one reader of files). Pure otherwise; the script text is the agent's, untrusted.
 */
export { analyzeScript, type ComplexScript, elsewhereCommand, type RedirectWrite, type Subcommand, unwrapCommand } from './analyze.js';
export { cacheData, runCommonJs } from './code-cache.js';
export { parseShellLcPlainCommands, parseShellLcSingleCommandPrefix } from './codex-compat.js';
export { inProcessCommands, isLoader, MULTI_CALL } from './in-process.js';
export { runsElsewhere } from './runs-elsewhere.js';
export { detectShell, nestedShell } from './shell-detect.js';
export { sameSourcedFiles, type SourcedFile, sourceReader } from './sourced-files.js';
export type { OpaqueKind } from './types.js';
