/**
 * A prefix pattern: an exact first token (the program) and later tokens that are either one string or a
 * list of alternatives. Matching is exact, case-sensitive, token by token; arguments after the prefix are free.
 */
export type PatternToken = string | readonly string[];

export interface PrefixPattern {
  readonly first: string;
  readonly rest: readonly PatternToken[];
}

/** The matched prefix of `command` with `program` standing in for command[0], or undefined. */
export function matchPrefix(p: PrefixPattern, command: readonly string[]): string[] | undefined {
  const rest = p.rest;
  if (command.length < rest.length + 1) return undefined;
  for (let i = 0; i < rest.length; i++) {
    const want = rest[i];
    const got = command[i + 1];
    if (typeof want === 'string' ? got !== want : !want.includes(got)) return undefined;
  }
  return command.slice(0, rest.length + 1) as string[];
}

/** Rust `Debug` of a pattern, as Codex 0.169.0 prints it in example-validation errors. */
export function debugPattern(p: PrefixPattern, canonicalMatching: boolean): string {
  const rest = p.rest.map((t) => (typeof t === 'string' ? `Single(${rustStr(t)})` : `Alts([${t.map(rustStr).join(', ')}])`));
  return `PrefixPattern { canonical_matching: ${canonicalMatching}, first: ${rustStr(p.first)}, rest: [${rest.join(', ')}] }`;
}

/** Rust's `{:?}` of a str. */
export function rustStr(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\0') out += '\\0';
    else if (c < 0x20 || c === 0x7f) out += `\\u{${c.toString(16)}}`;
    else out += ch;
  }
  return out + '"';
}
