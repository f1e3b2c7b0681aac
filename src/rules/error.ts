/** A rule-file problem with its location. The message is already "file:line:col: text" (Codex's text). */
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
