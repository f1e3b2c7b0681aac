// Random rule sets and commands for the differential test: alternatives, host executables, absolute and
// relative paths, odd tokens, examples, every string form. Deterministic for a given seed.
import { shlexJoin } from '../../src/rules/shlex.js';

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Case {
  files: string[];
  command: string[];
  resolve: boolean;
  pretty: boolean;
}

const PROGRAMS = ['git', 'ls', 'rm', 'npm', 'python3', 'sh', '/usr/bin/git', '/opt/x/rm', 'GIT', 'git.exe'];
const ODD = [
  '',
  ' ',
  '\t',
  '--',
  '-rf',
  'a b',
  'a"b',
  "a'b",
  'x\\y',
  '$HOME',
  '*',
  'é',
  '日本',
  '#c',
  '^x',
  '!',
  'a=b',
  '\n',
  'status',
  'commit',
  '-m',
  'i',
  'install',
];
const PATHS: Record<string, string[]> = {
  git: ['/usr/bin/git', '/usr/local/bin/git', '/opt/homebrew/bin/git'],
  rm: ['/bin/rm', '/usr/bin/rm', '/opt/x/rm'],
  ls: ['/bin/ls'],
  npm: ['/usr/bin/npm'],
  python3: ['/usr/bin/python3'],
  sh: ['/bin/sh'],
};

export function starlarkString(s: string, r: () => number): string {
  const style = r();
  if (style < 0.15 && !/[\\\n\r]/.test(s) && s !== '') return `r"${s.replace(/"/g, '\\"')}"`; // raw: \" keeps only the quote
  if (style < 0.3) return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r')}'`;
  if (style < 0.4 && !/"|\\/.test(s) && !s.endsWith('"')) return `"""${s}"""`;
  return JSON.stringify(s);
}

export function generateCase(r: () => number): Case {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const str = (s: string) => starlarkString(s, r);
  const list = (xs: string[]) => `[${xs.map(str).join(', ')}${r() < 0.2 ? ',' : ''}]`;
  const token = () => (r() < 0.6 ? pick(['status', 'commit', '-m', 'i', 'install', '-rf', 'log', '--', '-l']) : pick(ODD));
  const ruleHeads: string[][] = [];
  const nFiles = r() < 0.2 ? 2 : 1;
  const files: string[] = [];
  const hostNames: string[] = [];
  for (let f = 0; f < nFiles; f++) {
    const lines: string[] = [];
    if (r() < 0.3) lines.push('# rules generated for the differential test');
    const nRules = 1 + Math.floor(r() * 5);
    for (let k = 0; k < nRules; k++) {
      const firsts = r() < 0.3 ? [pick(PROGRAMS), pick(PROGRAMS)] : [pick(PROGRAMS)];
      const restLen = Math.floor(r() * 3);
      const rest: (string | string[])[] = [];
      for (let j = 0; j < restLen; j++) rest.push(r() < 0.3 ? [token(), token()] : token());
      const firstExpr = firsts.length > 1 ? list(firsts) : r() < 0.1 ? list(firsts) : str(firsts[0]);
      const restExprs = rest.map((t) => (typeof t === 'string' ? str(t) : list(t)));
      let patternExpr = `[${[firstExpr, ...restExprs].join(', ')}]`;
      if (r() < 0.15 && restExprs.length) {
        // a top-level variable reused with `+`
        const v = `P${f}_${k}`;
        lines.push(`${v} = [${restExprs.join(', ')}]`);
        patternExpr = `[${firstExpr}] + ${v}`;
      }
      const args: string[] = [];
      const decision = r() < 0.25 ? undefined : pick(['allow', 'prompt', 'forbidden']);
      const positional = r() < 0.15;
      if (positional) args.push(patternExpr);
      else args.push(`pattern = ${patternExpr}`);
      if (decision) args.push(positional ? str(decision) : `decision = ${str(decision)}`);
      else if (positional) args.push('"allow"');
      const example = [firsts[0], ...rest.map((t) => (typeof t === 'string' ? t : pick(t)))];
      if (!positional && r() < 0.2) {
        const ex = r() < 0.8 ? example : [firsts[0], 'zzz-nothing'];
        if (rest.length === 0 && ex[1] === 'zzz-nothing') ex.pop();
        const exStr = ex.every((t) => t !== '') ? shlexJoin(ex) : undefined;
        args.push(`match = [${exStr !== undefined && r() < 0.5 ? str(exStr) : list(ex)}]`);
      }
      if (!positional && r() < 0.15) {
        const ex = r() < 0.8 ? [firsts[0] + '-other', 'x'] : example;
        args.push(`not_match = [${r() < 0.5 ? str(shlexJoin(ex)) : list(ex)}]`);
      }
      if (!positional && r() < 0.3) args.push(`justification = ${str(pick(['destructive', 'read only "safe"', 'é ok', 'use\ttabs', '   ']))}`);
      if (r() < 0.03) args.push('decision2 = "x"'); // unknown keyword: both must reject
      const multiLine = r() < 0.3;
      lines.push(multiLine ? `prefix_rule(\n    ${args.join(',\n    ')},\n)` : `prefix_rule(${args.join(', ')})`);
      ruleHeads.push(example);
    }
    if (r() < 0.4) {
      const name = pick(Object.keys(PATHS));
      const paths = PATHS[name].filter(() => r() < 0.5);
      if (r() < 0.05) paths.push('/usr/bin/wrong');
      lines.push(`host_executable(name = ${str(name)}, paths = ${list(paths)})`);
      hostNames.push(name);
    }
    if (r() < 0.1) lines.push(`network_rule(host = "api.example.com", protocol = "https", decision = "${pick(['allow', 'deny', 'prompt'])}")`);
    if (r() < 0.02) lines.push(pick(['prefix_rule(', 'x = [', 'prefix_rule(pattern=["a"], decision="deny")', 'foo()']));
    files.push(lines.join(r() < 0.1 ? '\n\n' : '\n') + (r() < 0.8 ? '\n' : ''));
  }
  // the command: a rule's own prefix (maybe respelled as a path), or something random
  let command: string[];
  if (r() < 0.75 && ruleHeads.length) {
    command = [...pick(ruleHeads)];
    if (r() < 0.5) command.push(...Array.from({ length: Math.floor(r() * 3) }, token));
    const base = command[0].split('/').pop()!;
    const respell = r();
    if (respell < 0.3 && PATHS[base]) command[0] = pick(PATHS[base]);
    else if (respell < 0.4)
      command[0] = pick([`./${base}`, `../bin/${base}`, `/usr/bin/${base}/`, `/usr/bin/../bin/${base}`, `/${base}`, `~/${base}`, `bin/${base}`]);
    if (r() < 0.1) command = command.slice(0, 1 + Math.floor(r() * command.length));
  } else {
    command = [pick([...PROGRAMS, ...hostNames, '/usr/bin/python3', 'unknown'])];
    for (let j = Math.floor(r() * 3); j > 0; j--) command.push(token());
  }
  return { files, command, resolve: r() < 0.5, pretty: r() < 0.2 };
}
