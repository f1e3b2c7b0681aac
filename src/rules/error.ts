/**
 * The rule language's one error type (pure): a rule-file problem (a bad rule, example, host_executable or
 * network_rule, Starlark the rule files may not use, a file that does not load) and a refused amendment.
 * Located when the place is known: the message is then "file:line:col: text" (Codex's text); `reason` is
 * always the bare text. A rule's own check throws it unlocated, and the parser adds the call site.
 */
export interface Location {
  file: string;
  line: number; // 1-based
  col: number; // 1-based
}

export class PolicyError extends Error {
  readonly file?: string;
  readonly line?: number;
  readonly col?: number;
  /** the bare reason, without the location prefix */
  readonly reason: string;

  constructor(reason: string, loc?: Partial<Location>) {
    super(formatLocated(reason, loc));
    this.name = 'PolicyError';
    this.reason = reason;
    this.file = loc?.file;
    this.line = loc?.line;
    this.col = loc?.col;
  }
}

function formatLocated(reason: string, loc?: Partial<Location>): string {
  if (!loc?.file) return reason;
  if (loc.line === undefined) return `${loc.file}: ${reason}`;
  return `${loc.file}:${loc.line}:${loc.col ?? 1}: ${reason}`;
}
