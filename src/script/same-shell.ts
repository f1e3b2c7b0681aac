/**
 * Builtins that change what this same shell runs beyond the commands of the list: a script using them
 * is complex (in a wrapper's argv, unwrapCommand marks them opaque instead).
 */

/** After these, a later `ls` may not run the program ls (aliases, hashed paths, loaded builtins). */
const RESOLUTION_CHANGERS = new Set(['alias', 'hash', 'enable', 'shopt']);

/** Why this command (its words after quote removal) makes the shell run unlisted commands, if it does. */
export function sameShellEffect(words: string[]): string | null {
  let i = 0;
  while (words[i] === 'command' || words[i] === 'builtin') {
    i++;
    while (words[i]?.startsWith('-')) i++;
  }
  const name = words[i];
  if (name === undefined) return null;
  if (RESOLUTION_CHANGERS.has(name)) return `${name} changes what later command names run`;
  if (name === 'eval' || name === 'source' || name === '.') return `${name} runs commands in this shell`;
  // `trap '' SIG`, `trap - SIG`, `trap -p`, `trap` alone run nothing.
  const action = words[i + 1];
  if (name === 'trap' && action !== undefined && action !== '' && action !== '-' && !action.startsWith('-') && words.length > i + 2)
    return 'trap sets a command string to run later';
  return null;
}
