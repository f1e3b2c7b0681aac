/**
 * Finding and reading rule files (the only I/O in the policy core). Fail closed: an unreadable folder,
 * an unreadable, oversized or non-UTF-8 file stops loading with a located PolicyError.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { PolicyError } from './error.js';
import { parsePolicy, type PolicySource } from './parser.js';
import type { Policy } from './policy.js';
import { codexHome, gateHome } from '../paths/index.js';

export interface LoadOptions {
  env?: Record<string, string | undefined>;
  extraFiles?: string[];
  /** default true: read the rule folders; false: only extraFiles */
  includeDefaults?: boolean;
}

/** Rule files larger than this are refused: no real policy comes close, and parsing must stay bounded. */
export const MAX_RULES_FILE_BYTES = 4 * 1024 * 1024;

// computed in one place, with the runtime folder, so every entry point agrees (paths/paths.ts); the
// re-export only lets test/unit/paths/paths.test.ts check that the rules see the same folders
export { gateHome, codexHome };

/** Where amendments go: $CODEX_HOME/rules/default.rules (Codex's own choice, so both tools see them). */
export function defaultRulesFile(env: Record<string, string | undefined> = process.env): string {
  return join(codexHome(env), 'rules', 'default.rules');
}

function listFolder(dir: string, ext: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return [];
    throw new PolicyError(`failed to read rules files from ${dir}: ${reason(e)}`, { file: dir });
  }
  return names
    .filter((n) => n.endsWith(ext) && n.length > ext.length)
    .map((n) => join(dir, n))
    .filter((p) => {
      try {
        return statSync(p).isFile();
      } catch (e) {
        throw new PolicyError(`failed to read rules file: ${reason(e)}`, { file: p });
      }
    })
    .sort();
}

export function ruleFiles(opts: LoadOptions): string[] {
  const env = opts.env ?? process.env;
  const out: string[] = [];
  if (opts.includeDefaults ?? true) {
    out.push(...listFolder(join(gateHome(env, { read: true }), 'rules'), '.rules'));
    out.push(...listFolder(join(codexHome(env), 'rules'), '.rules'));
    out.push(...listFolder(join(codexHome(env), 'policy'), '.codexpolicy'));
  }
  out.push(...(opts.extraFiles ?? []));
  return out;
}

/** Read one rule file as strict UTF-8, bounded in size. */
export function readRulesFile(path: string): PolicySource {
  let buf: Buffer;
  try {
    const st = statSync(path);
    if (st.isDirectory()) throw new PolicyError('failed to read policy: is a directory', { file: path });
    if (st.size > MAX_RULES_FILE_BYTES) {
      throw new PolicyError(`rules file is too large (${st.size} bytes; the limit is ${MAX_RULES_FILE_BYTES})`, { file: path, line: 1, col: 1 });
    }
    buf = readFileSync(path);
  } catch (e) {
    if (e instanceof PolicyError) throw e;
    throw new PolicyError(`failed to read policy: ${reason(e)}`, { file: path });
  }
  try {
    return { path, text: new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(buf) };
  } catch {
    throw new PolicyError('rules file is not valid UTF-8', { file: path, ...badUtf8At(buf) });
  }
}

/** line:col of the first byte that is not valid UTF-8 (col counts characters before it on its line). */
function badUtf8At(buf: Buffer): { line: number; col: number } {
  let i = 0;
  while (i < buf.length) {
    const b = buf[i];
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    if (len === 0 || i + len > buf.length) break;
    let ok = true;
    for (let k = 1; k < len; k++) if ((buf[i + k] & 0xc0) !== 0x80) ok = false;
    if (!ok || !isValid(buf.subarray(i, i + len))) break;
    i += len;
  }
  const lines = buf.subarray(0, i).toString('utf8').split('\n');
  return { line: lines.length, col: [...lines[lines.length - 1]].length + 1 };
}

function isValid(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function reason(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  const map: Record<string, string> = {
    ENOENT: 'No such file or directory',
    EACCES: 'Permission denied',
    ENOTDIR: 'Not a directory',
    EISDIR: 'Is a directory',
  };
  return (err.code && map[err.code]) || err.message || String(e);
}

/** Discover, read and parse; throws PolicyError and returns nothing partial. */
export function loadPolicy(opts: LoadOptions): Policy {
  const env = opts.env ?? process.env;
  return parsePolicy(ruleFiles(opts).map(readRulesFile), { home: env.HOME || homedir() });
}
