/** The result types of script analysis (re-exported by analyze.ts, which is the public entry point). */

export interface Subcommand {
  /** Words after quote removal, as bash will exec them (assignments stripped). */
  argv: string[];
  /** Leading NAME=VALUE words, raw source text. */
  assignments: string[];
  /** Commands that wrappers in argv will run, outermost first (env rm -f x → [['rm','-f','x']]). */
  inner: string[][];
  /** Why this command hides execution we cannot see (eval, source, su -c, ...). */
  opaque?: string;
  /** Has file redirections (writes/reads outside argv). */
  redirects: boolean;
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
  /** Codex §2.3 single-command heredoc prefix when it applies. */
  heredocPrefix?: string[];
}

export type ScriptAnalysis = PlainScript | ComplexScript;

export interface AnalyzeOptions {
  /** Scripts larger than this (UTF-8 bytes) are complex without a full analysis. */
  maxBytes?: number;
}

export interface Unwrapped {
  inner: string[][];
  opaque?: string;
}
