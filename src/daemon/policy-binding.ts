/**
 * Binds the daemon to the rules and the decide layer: how rule files are found and loaded (for hot
 * reload), how a Policy becomes a Decider (src/decide/decider.ts, given the daemon's I/O edge here), and
 * how amendments are appended. Not pure: it reads rule files, sourced files, skills and program files, as
 * the caller's user, outside any sandbox.
 */
import { basename, join } from 'node:path';
import { closeSync, openSync, readSync } from 'node:fs';
import {
  appendAllowPrefixRule,
  appendNetworkRule,
  defaultRulesFile,
  formatAllowPrefixRule,
  formatNetworkRule,
  loadPolicy,
  type NetworkAmendment,
  type Policy,
} from '../rules/index.js';
import { policyDecider, type Decider, type DeciderIo } from '../decide/index.js';
import { codexHome, type Env, gateHome, gatePaths } from '../paths/index.js';
import { lookupSkill, skillsFor } from '../skills/index.js';
import type { PolicyLoader } from './policy-watch.js';
import { sameSourcedFiles, type SourcedFile, sourceReader } from '../script/index.js';
import { inProcessRunners, kernelCommandOf, ProgramIdentity } from './program-identity.js';

/** One for the daemon: its hash cache outlives policy reloads. */
const identity = new ProgramIdentity();
/** Looked up once: the loaders and multi-call binaries a copy of which is decided as what it runs. */
const RUNNERS = inProcessRunners();

export interface BindingOptions {
  env: Env;
  extraFiles: string[];
  gitReadOnly(): boolean;
}

export interface PolicyBinding {
  loader: PolicyLoader<unknown>;
  deciderFor(p: unknown): Decider;
  /** append the allow rule to the default rules file; resolves with the rule line */
  amend(prefix: string[]): Promise<string>;
  /** append a network_rule to the same file (a network prompt's saved answer); resolves with the rule line */
  amendNetwork(rule: NetworkAmendment): Promise<string>;
  amendmentFile: string;
  /** what knowing a program by its bytes reads besides the program's own file (ProgramIdentity.state) */
  knownProgramsState(): string;
}

export function policyBinding(o: BindingOptions): PolicyBinding {
  const loader: PolicyLoader<unknown> = {
    load: () => loadPolicy({ env: o.env, extraFiles: o.extraFiles }),
    // the folders loadPolicy reads (watched even before they exist) and the extra files
    watchPaths: () => [join(gateHome(o.env), 'rules'), join(codexHome(o.env), 'rules'), join(codexHome(o.env), 'policy'), ...o.extraFiles],
    files: (p) => (p as Policy).files,
  };
  const amendmentFile = defaultRulesFile(o.env);
  const io = deciderIo(o.env);
  return {
    loader,
    deciderFor: (p) => policyDecider(p as Policy, io),
    amend: async (prefix) => {
      await appendAllowPrefixRule(amendmentFile, prefix);
      return formatAllowPrefixRule(prefix);
    },
    amendNetwork: async (rule) => {
      await appendNetworkRule(amendmentFile, rule);
      return formatNetworkRule(rule);
    },
    amendmentFile,
    knownProgramsState: () => identity.state(),
  };
}

/** A file's `#!` line (without `#!`), or null: the first 256 bytes only. */
function shebangOf(path: string): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const head = buf.subarray(0, n).toString('latin1');
    const end = head.indexOf('\n');
    return head.startsWith('#!') && end > 0 ? head.slice(2, end) : null;
  } catch {
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The rule name the exec's file is a copy of (same bytes), when its own name is another. The kernel layer
 * names the file the kernel runs; the LD_PRELOAD layer's path is read as the daemon sees it. */
function knownAs(req: { program: string; program_file?: string }): string | undefined {
  const file = req.program_file ?? (req.program.startsWith('/proc/') ? undefined : req.program);
  const name = file === undefined ? undefined : identity.identify(file);
  return name !== undefined && name !== basename(req.program) ? name : undefined;
}

/** The decider's I/O edge: what the daemon reads for it, as the caller's user, outside any sandbox. */
function deciderIo(trusted: Env): DeciderIo<SourcedFile> {
  // what no sandbox sees is never read for a script's `source` (see sourced-files.ts)
  const hidden = [gatePaths(trusted).runtime];
  return {
    trusted,
    readSources: () => sourceReader({ hidden }),
    sameSources: sameSourcedFiles,
    skillFor: (program, cwd) => lookupSkill(program, skillsFor(trusted, cwd)),
    guardPrograms: (names) => identity.setNames([...names, ...RUNNERS]),
    knownAs,
    shebangOf,
    kernelCommand: (req) => kernelCommandOf(req, identity),
  };
}
