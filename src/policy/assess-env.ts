/**
 * Variables a subcommand sets for the program it runs: bash assignments (`LD_PRELOAD=x cmd`) and the
 * NAME=VALUE operands of `env`, `sudo` and `doas`. Raw values: the point is only which names are set.
 */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;
/** Options of env/sudo/doas that take a separate value. */
const WITH_VALUE: Record<string, ReadonlySet<string>> = {
  env: new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']),
  sudo: new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-r', '-t', '-U', '-T', '--user', '--group', '--chdir', '--host', '--prompt']),
  doas: new Set(['-u', '-C']),
};

export function assignmentsToEnv(words: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const w of words) {
    const m = ASSIGNMENT.exec(w);
    if (m) env[m[1]] = m[2];
  }
  return env;
}

/** NAME=VALUE operands a wrapper passes in the environment of the command it runs. */
export function wrapperAssignments(argv: readonly string[]): string[] {
  const prog = argv[0] ?? '';
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
