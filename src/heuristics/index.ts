/** Heuristics for commands no rule matches: known-safe, dangerous, code-loading environment. */
export { isKnownSafeCommand, isSafeToCallWithExec, type SafeOptions } from './safe.js';
export { isGitReadOnly } from './git-read-only.js';
export { dangerousCommand, type DangerKind, type DangerOptions } from './dangerous.js';
export { codeLoadingVariables, codeLoadingNames, isCodeLoadingName, type CodeLoadingOptions, type CodeLoadingVariable } from './code-loading.js';
export { commandMightBeDangerous } from './dangerous-script.js';
export { isSafeValue } from './code-loading.js';
export { dangerLooksAt } from './dangerous.js';
