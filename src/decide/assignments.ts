/**
 * Variables a subcommand sets for the programs it or later commands run: bash assignments
 * (`LD_PRELOAD=x cmd`), the NAME=VALUE operands of `env`, `sudo` and `doas`, and the declaration builtins
 * (`export LD_PRELOAD=x; git status`). Raw values: the point is which names are set.
 */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
/** Options of env/sudo/doas that take a separate value. */
const WITH_VALUE: Record<string, ReadonlySet<string>> = {
  env: new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']),
  sudo: new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '--user', '--group', '--chdir', '--host', '--prompt']),
  doas: new Set(['-u', '-C']),
};
/** Builtins whose NAME=VALUE operands set shell variables for every later command. */
const DECLARATIONS = new Set(['export', 'declare', 'typeset', 'readonly', 'local']);

export function assignmentsToEnv(words: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const w of words) {
    const m = ASSIGNMENT.exec(w);
    if (m) env[m[1]] = m[2];
  }
  return env;
}

/** NAME=VALUE operands of a wrapper or a declaration builtin. */
export function wrapperAssignments(argv: readonly string[]): string[] {
  const prog = argv[0] ?? '';
  if (DECLARATIONS.has(prog)) return argv.slice(1).filter((a) => ASSIGNMENT.test(a));
  const base = prog.slice(prog.lastIndexOf('/') + 1);
  const opts = WITH_VALUE[base];
  if (!opts) return [];
  const out: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') continue;
    if (a.startsWith('-')) {
      if (opts.has(a)) i++;
      continue;
    }
    if (!ASSIGNMENT.test(a)) break;
    out.push(a);
  }
  return out;
}
