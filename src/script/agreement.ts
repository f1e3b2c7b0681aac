/**
 * The agreement rule: mvdan found the script plain; bash-parser, asked separately, must see the same
 * commands with the same words (assignments included), or the script is complex.
 */
import { list, span, type MvNode } from './mvdan.js';
import { secondOpinion, type OpinionCommand } from './second-opinion.js';
import type { Subcommand } from './types.js';

/** bash-parser is asked per chunk of whole top-level statements of about this size. */
const CHUNK_BYTES = 2048;

/** Why bash-parser disagrees with mvdan's plain commands, or null when it agrees. */
export function disagreementWithSecondParser(mine: Subcommand[], file: MvNode, src: Buffer, ansiC: [number, number][]): string | null {
  return compare(mine, askSecondOpinion(file, src, ansiC));
}

/**
 * bash-parser per chunk of whole top-level statements (it is quadratic in its input). It throws on
 * `$'..'`, so those strings are masked as `'___'` (same number of code points, so its offsets still
 * fit the real text); the words themselves are read from the real text and unquoted independently.
 */
function askSecondOpinion(file: MvNode, src: Buffer, ansiC: [number, number][]): OpinionCommand[] | string {
  const stmts = list(file.Stmts);
  const out: OpinionCommand[] = [];
  for (let i = 0; i < stmts.length; ) {
    const start = span(stmts[i])[0];
    let j = i;
    while (j + 1 < stmts.length && span(stmts[j + 1])[1] - start <= CHUNK_BYTES) j++;
    const end = span(stmts[j])[1];
    const text = src.subarray(start, end).toString('utf8');
    const spans = ansiC.filter(([a, b]) => a >= start && b <= end).map(([a, b]): [number, number] => [a - start, b - start]);
    const op = secondOpinion(spans.length ? mask(src.subarray(start, end), spans) : text, text);
    if (!op.ok) return op.error;
    out.push(...op.commands);
    i = j + 1;
  }
  return out;
}

function compare(mine: Subcommand[], theirs: OpinionCommand[] | string): string | null {
  if (typeof theirs === 'string') return theirs;
  if (mine.length !== theirs.length) return `${mine.length} commands vs ${theirs.length} for bash-parser`;
  for (let i = 0; i < mine.length; i++) {
    const a = mine[i];
    const b = theirs[i];
    if (!sameWords(a.argv, b.argv) || !sameWords(a.assignments, b.assignments))
      return `command ${i + 1}: ${JSON.stringify([...a.assignments, ...a.argv])} vs ${JSON.stringify([...b.assignments, ...b.argv])}`;
  }
  return null;
}

function sameWords(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Each byte span replaced by '_..._' quoted, with as many code points as it had. */
function mask(chunk: Buffer, spans: [number, number][]): string {
  let out = '';
  let from = 0;
  for (const [a, b] of [...spans].sort((x, y) => x[0] - y[0])) {
    out += chunk.subarray(from, a).toString('utf8');
    const n = [...chunk.subarray(a, b).toString('utf8')].length;
    out += `'${'_'.repeat(Math.max(0, n - 2))}'`;
    from = b;
  }
  return out + chunk.subarray(from).toString('utf8');
}
