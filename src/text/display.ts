/**
 * The one way a command or a piece of text is shown to a person who decides on it: every approval surface
 * (`gate approve`, the daemon's terminal, the inline PTY approver, MCP elicitation text, the JSON-RPC host,
 * hook reasons) and the denial messages go through here. Pure.
 *
 * Trust boundary: the text comes from the agent's script (untrusted). A terminal must not be able to hide
 * any of it: control characters (CR, ESC sequences such as `ESC[J`, cursor moves, OSC titles), C1 controls,
 * bidi overrides and isolates, zero-width and other format characters, line separators and spaces that are
 * not U+0020 are made visible as the escapes bash itself reads (`$'\e[J'`, `\u202e`), so what is shown is
 * both what runs and unambiguous. A long command is shown as its head and tail with its length, never
 * silently cut.
 */
import { quote } from 'shell-quote';
import { RAW_BYTE } from './raw-bytes.js';

/** Characters a terminal does not show as themselves. The astral ranges need the `u` flag. */
const HIDDEN =
  /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Co}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u115f\u1160\u3164\uffa0\u2800\ufff9-\ufffb]|[\u{e0000}-\u{e007f}]/u;
const HIDDEN_ALL = new RegExp(HIDDEN.source, 'gu');

const NAMED: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\v': '\\v', '\f': '\\f', '\r': '\\r', '\x1b': '\\e' };

/** One hidden character as bash's `$'...'` escape: `\e`, `\r`, `\x7f`, `\u202e`, `\U000e0041`. */
function escapeChar(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const cp = c.codePointAt(0) ?? 0;
  if (RAW_BYTE.test(c)) return `\\x${(cp - 0xf700).toString(16)}`; // a byte that is not UTF-8 (raw-bytes.ts)
  // \x is a byte to bash: only ASCII is the same character that way (U+0080.. are \u, their UTF-8)
  if (cp < 0x80) return `\\x${cp.toString(16).padStart(2, '0')}`;
  if (cp < 0x10000) return `\\u${cp.toString(16).padStart(4, '0')}`;
  return `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** Whether a person would not see all of `s` as it is. */
export function hasHidden(s: string): boolean {
  return HIDDEN.test(s);
}

/** Free text (a reason, a folder, a rule) with every hidden character shown as its escape; a backslash stays. */
export function visibleText(s: string): string {
  return s.replace(HIDDEN_ALL, escapeChar);
}

/** One word as a person should read it, in a form bash reads back as the same word. */
export function displayWord(w: string): string {
  if (/^[\w@%+=:,./-]+$/.test(w)) return w; // plain words stay bare (shell-quote would write `a\=b`)
  if (!hasHidden(w)) return quote([w]);
  // ANSI-C quoting: the only form in which bash reads the escapes back as the characters they stand for
  return `$'${w.replace(/[\\']/g, '\\$&').replace(HIDDEN_ALL, escapeChar)}'`;
}

/** How long a shown command may be in a prompt before its middle is left out (with the length said). */
export const PROMPT_MAX = 2000;

/**
 * A command (argv) as one line for a person: each word through displayWord, then `fit` to `max` characters.
 */
export function displayCommand(argv: readonly string[], max = PROMPT_MAX): string {
  return fit(argv.map(displayWord).join(' '), max);
}

/** A script (one string) as one visible line, fitted like a command. */
export function displayScript(script: string, max = PROMPT_MAX): string {
  return fit(visibleText(script), max);
}

/**
 * `s` itself when it fits in `max` characters; otherwise its head and tail around a marker that gives the
 * whole length and how much is not shown, so nothing is cut without saying so.
 */
export function fit(s: string, max: number): string {
  if (s.length <= max) return s;
  const room = Math.max(max - 48, 16);
  let head = Math.ceil((room * 2) / 3);
  let tail = room - head;
  // never split a surrogate pair (a lone half would be shown as an escape that is not in the command)
  if (/[\udc00-\udfff]/.test(s[head] ?? '')) head++;
  if (/[\udc00-\udfff]/.test(s[s.length - tail] ?? '')) tail--;
  return `${s.slice(0, head)} …[${s.length} characters, ${s.length - head - tail} not shown]… ${s.slice(s.length - tail)}`;
}

/**
 * What a permission request opens of the hidden credential locations, as one line for a prompt: "reads the
 * hidden secret location /h/.ssh", "writes /h/.aws/credentials (inside the hidden secret location /h/.aws)".
 */
export function secretAccessText(list: readonly { location: string; path: string; access: 'read' | 'write' }[]): string {
  return list
    .map((s) => {
      const verb = s.access === 'write' ? 'writes' : 'reads';
      const what = s.path === s.location ? `the hidden secret location ${s.location}` : `${s.path} (inside the hidden secret location ${s.location})`;
      return visibleText(`${verb} ${what}`);
    })
    .join('; ');
}

/** A markdown code span holding `s` whatever backticks it contains (MCP elicitation text is markdown). */
export function codeSpan(s: string): string {
  const longest = Math.max(0, ...(s.match(/`+/g) ?? []).map((r) => r.length));
  const fence = '`'.repeat(longest + 1);
  const pad = s.startsWith('`') || s.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${s}${pad}${fence}`;
}
