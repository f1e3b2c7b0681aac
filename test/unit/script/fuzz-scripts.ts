/**
 * A seeded generator of scripts: random words (quoting, escapes, globs, braces, tildes, expansions,
 * comments, UTF-8) joined by random operators. Used against real bash (oracle-fuzz) and to compare the
 * two ways of calling bash-parser (bash-parser-call).
 */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['aa', 'bb', 'echo', 'printf', 'true', 'false', 'test', 'cd', '\\cc', "'dd'", '"ee"', 'f"f"', 'env', 'sudo', 'xargs', 'timeout'];
const FRAGMENTS = [
  'x', '-l', '--all', '"a b"', "'c d'", '\\x', 'a\\ b', '"q\\"r"', "$'t\\tu'", '*', '?', '{a,b}', '{}', '~', '~/p', 'k=~',
  '$x', '${y}', '"$z"', '$(aa)', '`bb`', '#c', 'a#b', '=', 'k=v', 'é', '😀', '"$"', '\\$y', "'$z'", '""', "''", '[x]',
  '!', '%', '@', 'a:b', '\\\n', '"\\\\"', '"a\\nb"', "'a\\nb'", '\\"', "\\'", '";"', '\\;', '"|"', '\\&', '\\(', '"{a,b}"',
  '\\*', "'*'", '"x\ny"', '-', '--', '0', '\\\\', '"\\$"', '$((1))', '\\#', '"#"', '\\~', 'a=b', 'a\\=b',
  "$'\\x41'", "$'\\101'", "$'\\u00e9'", "$'a\\'b'", '"\\`"', '"a\\\nb"', "'a\\\nb'", "'\\''", '\t', '{a..c}', 'a{b,c}d',
  '[]', ']', 'x[', '**', '@(x)', '!(x)', 'a=b=c', '~root', '\u00a0', '\f', '\v', '$"x"', '${#x}', '$$', '$?', '$1',
  '"$@"', '$-', '\\\t', '"\\a"', '\\\\\\', '\\\'\\\'', '"\'"', "'\"'", '{,}', '{x}', 'a}', '{', '}', ':',
];
const OPS = [' && ', ' || ', '; ', ' | ', '\n', ';\n', ' &&\n', ' |\n', ' & ', ' |& '];
const EXTRAS = [' > /dev/null', ' 2>&1', ' # trailing comment', ''];

export function randomScript(r: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  const n = 1 + Math.floor(r() * 4);
  let s = '';
  for (let i = 0; i < n; i++) {
    if (i > 0) s += r() < 0.9 ? pick(OPS.slice(0, 8)) : pick(OPS);
    if (r() < 0.15) s += `K${i}=${pick(['v', '"a b"', "'c'", '$x', '~/y', ''])} `;
    s += pick(NAMES);
    const args = Math.floor(r() * 4);
    for (let k = 0; k < args; k++) {
      s += ' ';
      const parts = 1 + Math.floor(r() * 2);
      for (let p = 0; p < parts; p++) s += pick(FRAGMENTS);
    }
    if (r() < 0.08) s += pick(EXTRAS);
  }
  return s;
}
