/**
 * Typeahead in the interactive shell, kept as bash's own terminal keeps it. Keys typed after a line's Enter
 * are offered to that line's command (sent to the session's terminal when it starts); what it leaves unread
 * comes back when the line ends (PtySession.reclaimInput) and goes to the following prompts, one line each,
 * never to a command again (those bytes were echoed once already; offering them again would echo them again
 * and again). Pure: no I/O.
 */

const isLineEnd = (c: number) => c === 0x0d || c === 0x0a;

/**
 * Keys arriving at one prompt: bytes up to the first line end belong to the line being edited, whatever
 * follows (in the same chunk or later) was typed ahead. Without the split, node:readline drops the rest of
 * a chunk once it has a line.
 */
export class PromptKeys {
  private ended = false;

  constructor(
    private readonly toEditor: (d: Buffer) => void,
    private readonly typedAhead: (d: Buffer) => void,
  ) {}

  push(d: Buffer): void {
    if (this.ended) return this.typedAhead(d);
    const end = d.findIndex(isLineEnd);
    if (end < 0) return this.toEditor(d);
    this.ended = true;
    // the rest first: the editor may hand its line on synchronously, and the line takes its typeahead along
    if (end + 1 < d.length) this.typedAhead(d.subarray(end + 1));
    this.toEditor(d.subarray(0, end + 1));
  }
}

export class Typeahead {
  /** typed after a line's Enter, not offered to a command yet */
  private fresh: Buffer[] = [];
  /** left unread (or nothing ran): for the next prompts */
  private held: Buffer[] = [];

  typed(d: Buffer): void {
    this.fresh.push(d);
  }

  /** the keys the starting command gets on its terminal */
  forCommand(): Buffer[] {
    return this.fresh.splice(0);
  }

  /** the line ended: `unread` came back from its terminal; keys typed since follow them */
  lineEnded(unread: Buffer): void {
    this.held.push(unread, ...this.fresh.splice(0));
  }

  /** the line did not run (denied, failed to start): its typeahead is the next prompts' */
  notRun(): void {
    this.held.push(...this.fresh.splice(0));
  }

  /** an interrupt: a terminal flushes its input */
  flush(): void {
    this.fresh = [];
    this.held = [];
  }

  /** the bytes a fresh prompt starts with: held keys up to and including the first line end */
  forPrompt(): Buffer {
    const all = Buffer.concat(this.held.splice(0));
    const end = all.findIndex(isLineEnd);
    if (end < 0 || end + 1 === all.length) return all;
    this.held.push(all.subarray(end + 1));
    return all.subarray(0, end + 1);
  }
}
