/** `gate`'s own error line: `gate: ` before the message (gate-sh's stay `gate-sh: `), never twice. Pure. */
export function errorLine(e: unknown): string {
  return `gate: ${(e instanceof Error ? e.message : String(e)).replace(/^gate(-sh)?: /, '')}\n`;
}
