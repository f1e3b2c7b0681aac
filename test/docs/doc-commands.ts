/**
 * The commands README.md and docs/*.md show, read from the markdown (test-only, pure: reads text, runs
 * nothing). A command block is a fenced block marked sh/bash/shell/console, an unmarked block whose lines
 * start with `$ ` (the prompt marks the commands; the lines after one are the output the doc shows), or an
 * unmarked block in which every line is a `gate ...`/`gate-sh ...` command or a comment (a synopsis).
 * A `# ...` line right after a command in a sh block is what the doc says it prints.
 */

export interface DocCommand {
  /** README.md or docs/<page>.md */
  file: string;
  /** 1-based line of the command */
  line: number;
  /** the command as a user would type it: without the `$ ` prompt and the trailing `# comment` */
  cmd: string;
  /** the lines the doc shows after it: its output (a `$` block), or the `# ` lines under it (a sh block) */
  shown: string[];
}

const SHELL_LANGS = new Set(['sh', 'bash', 'shell', 'console']);

/** `s` without a trailing ` # comment` outside quotes. */
export function stripComment(s: string): string {
  let q = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (q) {
      if (c === q) q = '';
      else if (c === '\\' && q === '"') i++;
    } else if (c === "'" || c === '"') q = c;
    else if (c === '\\') i++;
    else if (c === '#' && (i === 0 || /\s/.test(s[i - 1]))) return s.slice(0, i).trimEnd();
  }
  return s.trimEnd();
}

interface Block {
  lang: string;
  /** line number of the block's first content line */
  start: number;
  lines: string[];
}

function blocks(md: string): Block[] {
  const out: Block[] = [];
  let open: { fence: string; block: Block } | undefined;
  md.split('\n').forEach((line, i) => {
    const m = /^\s*(`{3,}|~{3,})\s*([\w-]*)/.exec(line);
    if (open) {
      if (m && m[1][0] === open.fence[0] && m[1].length >= open.fence.length && m[2] === '') open = undefined;
      else open.block.lines.push(line);
    } else if (m) {
      open = { fence: m[1], block: { lang: m[2].toLowerCase(), start: i + 2, lines: [] } };
      out.push(open.block);
    }
  });
  return out;
}

const isComment = (l: string) => /^\s*#/.test(l);

/** Every command of one page, in page order. */
export function docCommands(file: string, md: string): DocCommand[] {
  const out: DocCommand[] = [];
  for (const b of blocks(md)) {
    const lines = b.lines;
    const prompt = lines.some((l) => l.startsWith('$ '));
    const synopsis = lines.some((l) => l.trim() !== '') && lines.every((l) => l.trim() === '' || isComment(l) || /^(gate|gate-sh) /.test(l));
    if (SHELL_LANGS.has(b.lang)) {
      lines.forEach((l, i) => {
        if (l.trim() === '' || isComment(l)) return;
        const shown: string[] = [];
        for (let j = i + 1; j < lines.length && isComment(lines[j]) && lines[j].startsWith('# '); j++) shown.push(lines[j].slice(2));
        out.push({ file, line: b.start + i, cmd: stripComment(l.replace(/^\$ /, '')), shown });
      });
    } else if (b.lang === '' && prompt) {
      lines.forEach((l, i) => {
        if (!l.startsWith('$ ')) return;
        const shown: string[] = [];
        for (let j = i + 1; j < lines.length && !lines[j].startsWith('$ '); j++) shown.push(lines[j]);
        while (shown.length && shown[shown.length - 1].trim() === '') shown.pop();
        out.push({ file, line: b.start + i, cmd: stripComment(l.slice(2)), shown });
      });
    } else if (b.lang === '' && synopsis) {
      lines.forEach((l, i) => {
        if (l.trim() !== '' && !isComment(l)) out.push({ file, line: b.start + i, cmd: stripComment(l), shown: [] });
      });
    }
  }
  return out;
}

/** Whether `want` appears in `have` in order, each line whole (a doc may leave lines out, never change one). */
export function inOrder(want: readonly string[], have: readonly string[]): { ok: true } | { ok: false; missing: string } {
  let at = 0;
  for (const w of want) {
    while (at < have.length && have[at].trimEnd() !== w.trimEnd()) at++;
    if (at === have.length) return { ok: false, missing: w };
    at++;
  }
  return { ok: true };
}
