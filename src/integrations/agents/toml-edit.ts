/**
 * Reversible line edits of a TOML file (Codex's config.toml) that keep the user's comments and layout:
 * each line gate-sh adds ends with MARK, each line it replaces is kept commented out with REPLACED in
 * front, so undo can take exactly its own lines out again. Pure (text in, text out); the caller checks the
 * result still parses.
 */

export const MARK = '# added by gate setup';
export const REPLACED = '# replaced by gate setup: ';

const header = (line: string): string | undefined => /^\s*\[\s*([A-Za-z0-9_.\-"]+)\s*\]\s*(#.*)?$/.exec(line)?.[1]?.replace(/"/g, '');

/** Set `key = value` in `[table]`, adding the table at the end when the file has none. */
export function setTomlKey(text: string, table: string, key: string, value: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => header(l) === table);
  const ours = `${key} = ${value} ${MARK}`;
  if (start < 0) {
    const body = text === '' || text.endsWith('\n') ? text : text + '\n';
    // the separating line is gate-sh's too (a comment, not a blank line), so undo leaves no trace
    return `${body}${body === '' ? '' : `${MARK}\n`}[${table}] ${MARK}\n${ours}\n`;
  }
  let end = lines.findIndex((l, i) => i > start && header(l) !== undefined);
  if (end < 0) end = lines.length;
  const keyRe = new RegExp(`^\\s*"?${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\s*=`);
  for (let i = start + 1; i < end; i++) {
    if (lines[i] === ours) return text; // already there
    if (keyRe.test(lines[i])) {
      lines.splice(i, 1, REPLACED + lines[i], ours);
      return lines.join('\n');
    }
  }
  lines.splice(start + 1, 0, ours);
  return lines.join('\n');
}

/** Take gate-sh's lines out and put replaced lines back. */
export function removeTomlEdits(text: string): string {
  const out: string[] = [];
  for (const l of text.split('\n')) {
    if (l.endsWith(MARK)) continue;
    out.push(l.startsWith(REPLACED) ? l.slice(REPLACED.length) : l);
  }
  return out.join('\n');
}
