/** The result types of script analysis (re-exported by analyze.ts, which is the public entry point). */

/**
 * What kind of execution a command hides, as data: consumers decide on this, the `opaque` texts say the
 * same for people. dynamic-name: a program only known at run time (`$x -rf y`); eval / source: a string
 * or file run in this shell; command-string: a command string another program runs (`su -c`, `watch`,
 * `env -S`, a complex `bash -c` or trap string); shell: an interactive or login shell (`sudo -s`, `fish`);
 * remote: a command run elsewhere (`ssh`); wrapper: a command run through a program whose options we do
 * not parse (`chroot`, `strace`); script-file / stdin-script: a shell reading a file or stdin;
 * inline-code: interpreter code on the command line (`python3 -c`); edits-files: sudoedit; too-deep:
 * nesting past the limits; analysis-failed: the analysis itself failed.
 */
export type OpaqueKind =
  | 'dynamic-name' | 'eval' | 'source' | 'command-string' | 'shell' | 'remote' | 'wrapper'
  | 'script-file' | 'stdin-script' | 'inline-code' | 'edits-files' | 'too-deep' | 'analysis-failed';

/** A hidden execution: its kind and the text shown for it. */
export interface Hidden {
  kind: OpaqueKind;
  text: string;
}

export interface Subcommand {
  /** Words after quote removal, as bash will exec them (assignments stripped). */
  argv: string[];
  /** Leading NAME=VALUE words, raw source text. */
  assignments: string[];
  /** Commands that wrappers in argv will run, outermost first (env rm -f x → [['rm','-f','x']]). */
  inner: string[][];
  /** Why this command hides execution we cannot see (eval, source, su -c, ...), for display. */
  opaque?: string;
  /** The same as data; present exactly when `opaque` is. */
  opaqueKind?: OpaqueKind;
  /** Has file redirections (writes/reads outside argv). */
  redirects: boolean;
}

/** A redirection that opens a file for writing: the operator, the path as bash will open it (null when it
 * is only known at run time), and where it is. */
export interface RedirectWrite {
  op: string;
  target: string | null;
  at: string;
}

export type ListOp = '&&' | '||' | ';' | '|' | '|&' | '&' | '\n';

export interface PlainScript {
  kind: 'plain';
  commands: Subcommand[];
  /** ops[i] joins commands[i] and commands[i+1]. */
  ops: ListOp[];
}

export interface ComplexScript {
  kind: 'complex';
  /** Human-readable: "command substitution at 1:6", "parsers disagree", "script larger than N bytes", ... */
  reasons: string[];
  /** Every literal command found anywhere, for forbidden/prompt/danger checks only. */
  literalCommands: Subcommand[];
  /**
   * Every kind of hidden execution found anywhere, in order of first appearance: the literal commands'
   * `opaqueKind`s, and 'dynamic-name' for a command whose name is only known at run time (it has no
   * literal command; the reasons say where).
   */
  opaqueKinds: OpaqueKind[];
  /** Codex §2.3 single-command heredoc prefix when it applies. */
  heredocPrefix?: string[];
  /** The text was never walked (parse error, size, bad bytes, nesting): nothing in it is known. */
  unread?: true;
  /** Every redirection that writes a file, anywhere in the script; absent when the walk did not finish
   * (unparsed scripts, a `#` read again): then none can be listed */
  writes?: RedirectWrite[];
}

export type ScriptAnalysis = PlainScript | ComplexScript;

export interface AnalyzeOptions {
  /** Scripts larger than this (UTF-8 bytes) are complex without a full analysis. */
  maxBytes?: number;
  /**
   * The text of a file `source`/`.` runs, read now (the daemon passes a reader; the analysis stays pure in
   * what it is given). Only absolute literal paths are asked for; null (unreadable, too large) keeps
   * `source` opaque. Without a reader every `source` is opaque.
   */
  readSource?: (path: string) => string | null;
}

export interface Unwrapped {
  inner: string[][];
  /** As in Subcommand: the text, and the kind (present exactly when the text is). */
  opaque?: string;
  opaqueKind?: OpaqueKind;
}
