/**
 * Builtins that change what this same shell runs beyond the commands of the list: a script using them
 * is complex (in a wrapper's argv, unwrapCommand marks them opaque instead).
 */

/** After these, a later `ls` may not run the program ls (aliases, hashed paths, loaded builtins). */
const RESOLUTION_CHANGERS = new Set(['alias', 'hash', 'enable', 'shopt']);

/** The words a builtin takes as variable names, whose subscripts it expands (checked against bash 5.2). */
function namesOf(name: string, args: string[]): string[] {
  // `-v NAME` or `-vNAME`
  const after = (flags: string[]) => args.flatMap((a, k) => {
    if (k > 0 && flags.includes(args[k - 1])) return [a];
    const f = flags.find((x) => a.startsWith(x) && a.length > x.length);
    return f ? [a.slice(f.length)] : [];
  });
  switch (name) {
    case 'test': case '[': return after(['-v', '-R']);
    case 'printf': case 'wait': return after(['-v', '-p']);
    case 'read': case 'unset': case 'mapfile': case 'readarray': case 'getopts': return args;
    default: return [];
  }
}

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
  if (name === 'compgen' || name === 'fc') return `${name} can run command strings`;
  if (name === 'jobs' && words.slice(i + 1).some((a) => /^-[a-z]*x/.test(a))) return 'jobs -x runs a command';
  const args = words.slice(i + 1);
  if ((name === 'mapfile' || name === 'readarray') && args.some((a) => /^-[^-]*C/.test(a))) return `${name} -C runs a callback string`;
  // A literal variable name with a subscript (`unset 'a[$(rm x)]'`, `test -v`, `printf -v`, `read`) is
  // expanded by the builtin itself: the command substitution inside runs.
  if (namesOf(name, args).some((a) => a.includes('[') && /[$`]/.test(a))) return `${name} may expand an array subscript`;
  // `trap '' SIG`, `trap - SIG`, `trap -p`, `trap` alone run nothing.
  const action = words[i + 1];
  if (name === 'trap' && action !== undefined && action !== '' && action !== '-' && !action.startsWith('-') && words.length > i + 2)
    return 'trap sets a command string to run later';
  return null;
}
