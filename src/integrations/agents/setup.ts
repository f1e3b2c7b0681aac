/**
 * `gate setup <agent>` / `gate setup --undo <agent>` on disk: writes the bash-named entry point, edits the
 * agent's settings file, and keeps a record ($GATE_HOME/setup/<agent>.json, plus a copy of each file as it
 * was) so undo puts back exactly what was there: the original bytes when nobody touched the file since,
 * otherwise only gate-sh's own edits are taken out. Idempotent: running it again changes nothing.
 * Trust boundary: the settings files are the user's; they are parsed, never executed, and a file gate-sh
 * cannot parse is left untouched with a clear error.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseToml } from 'smol-toml';
import { codexHome, type Env, gateHome, gatePaths, homeDir } from '../../paths/index.js';
import { AGENTS, agentWritableRoots, codexSettings, jsonEdits, settingsFile, type AgentId, type Install, type Route } from './agents.js';
import { applyEdits, isObject, undoEdits, type AppliedEdit, type JsonObject } from './json-edit.js';
import { removeTomlEdits, setTomlKey } from './toml-edit.js';
import { ENTRY_MARK, isEntryLink, isGateShEntry } from './entry.js';

/** Repository root: dist/src/integrations/agents/setup.js → ../../../.. */
const ROOT = resolve(fileURLToPath(import.meta.url), '../../../../..');

export class SetupError extends Error {}

export function install(env: Env): Install {
  return { entry: join(gateHome(env), 'bin', 'bash'), node: process.execPath, gate: join(ROOT, 'bin', 'gate'), gateSh: join(ROOT, 'bin', 'gate-sh') };
}

interface FileRecord {
  file: string;
  existed: boolean;
  /** copy of the file as it was before the first set-up */
  backup?: string;
  /** sha256 of what set-up wrote: undo restores the backup byte for byte when the file still has it */
  written: string;
  edits?: AppliedEdit[];
  /** folders set-up created for the file (deepest first): undo removes them when it leaves them empty */
  createdDirs?: string[];
}

interface SetupRecord {
  agent: AgentId;
  routes: Route[];
  /** the entry point, when this set-up needed it */
  entry?: string;
  entryCreated?: boolean;
  settings?: FileRecord;
  /** gate-sh's own config.toml, when the route needs a line there (Claude Code's snapshot folder) */
  config?: FileRecord;
}

function recordPath(env: Env, id: AgentId): string {
  return join(gateHome(env), 'setup', `${id}.json`);
}

export function readRecord(env: Env, id: AgentId): SetupRecord | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(env, id), 'utf8')) as SetupRecord;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SetupError(`cannot read the set-up record ${recordPath(env, id)}: ${(e as Error).message}`);
  }
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Write a file atomically (temporary file + rename), keeping the mode of the file it replaces. */
function writeAtomic(file: string, text: string, mode?: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.gate-setup-${process.pid}`;
  writeFileSync(tmp, text, { mode: mode ?? 0o644 });
  if (mode !== undefined) chmodSync(tmp, mode);
  renameSync(tmp, file);
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new SetupError(`cannot read ${file}: ${(e as Error).message}`);
  }
}

function parseJsonSettings(file: string, text: string | undefined): JsonObject {
  if (text === undefined || text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new SetupError(`${file} is not plain JSON (${(e as Error).message}); nothing changed. Fix it, or make the change by hand (see 'gate setup --help')`);
  }
  if (!isObject(v)) throw new SetupError(`${file} does not hold a JSON object; nothing changed`);
  return v;
}

export interface SetupResult {
  /** what changed, one line each ("nothing to change" when already set up) */
  changes: string[];
  /** what the user still has to know or do */
  notes: string[];
}

/** Wire gate-sh into an agent by the given routes. */
export function setupAgent(id: AgentId, routes: Route[], env: Env): SetupResult {
  const agent = AGENTS[id];
  for (const r of routes) if (!agent.routes.includes(r)) throw new SetupError(`${agent.title} has no '${r}' route (it has: ${agent.routes.join(', ')})`);
  const inst = install(env);
  let prev = readRecord(env, id);
  const changes: string[] = [];
  if (prev && prev.routes.join(',') !== routes.join(',')) {
    // another route: take the old one out first, so the record always describes one set-up
    changes.push(...undoAgent(id, env).changes.map((c) => `(route ${prev!.routes.join('+')} → ${routes.join('+')}) ${c}`));
    prev = undefined;
  }
  const notes: string[] = [];
  const record: SetupRecord = { agent: id, routes };

  if (routes.includes('shell')) {
    const created = ensureEntry(inst);
    record.entry = inst.entry;
    record.entryCreated = created || prev?.entryCreated === true;
    if (created) changes.push(`created ${inst.entry}: gate-sh under the name bash (agents accept only a shell named bash or zsh)`);
  }

  const homes = { home: homeDir(env), codexHome: codexHome(env) };
  // computed before anything is written: a config gate-sh cannot edit stops set-up here
  const config = configEdit(agentWritableRoots(id, routes, env, homes), env);
  const file = settingsFile(id, env, homes);
  const before = readText(file);
  let after: string;
  let edits: AppliedEdit[] | undefined;
  if (id === 'codex') {
    after = before ?? '';
    for (const [table, key, value] of codexSettings(inst)) after = setTomlKey(after, table, key, value);
    checkToml(file, after);
  } else {
    const wanted = routes.flatMap((r) => jsonEdits(id, r, inst));
    const cur = parseJsonSettings(file, before);
    const res = applyEdits(cur, wanted, prev?.settings?.edits ?? []);
    edits = res.applied;
    after = res.changed || before === undefined ? JSON.stringify(res.root, null, 2) + '\n' : before;
    if (wanted.length === 0) after = before ?? '';
  }
  const settings = track({ env, id, tag: 'settings', file, before, after, prev: prev?.settings, edits, what: describe(id, routes, inst), changes });
  if (settings) record.settings = settings;
  if (config) {
    const n = changes.length;
    const tracked = track({
      env,
      id,
      tag: 'config',
      file: config.file,
      before: config.before,
      after: config.after,
      prev: prev?.config,
      what: config.what,
      changes,
    });
    if (tracked) record.config = tracked;
    if (changes.length > n)
      notes.push(`a gate daemon already running keeps its configuration until it starts again: 'gate daemon restart' (refused while runs are active, unless --force)`);
  }

  writeAtomic(recordPath(env, id), JSON.stringify(record, null, 2) + '\n', 0o600);
  if (changes.length === 0) changes.push('nothing to change: already set up');
  notes.push(...routeNotes(id, routes, inst));
  return { changes, notes };
}

interface ConfigEdit {
  file: string;
  before: string | undefined;
  after: string;
  roots: string[];
  what: string;
}

/**
 * The line of gate-sh's config.toml that adds an agent's own state folders to the turn sandbox
 * (`[sandbox_workspace_write] agent_writable_roots`: writable while they exist, skipped while missing, so
 * an agent that deletes its folder never makes gate-sh refuse every command), or undefined when the route
 * needs none.
 */
function configEdit(roots: string[], env: Env): ConfigEdit | undefined {
  if (roots.length === 0) return undefined;
  const file = gatePaths(env).configFile;
  const before = readText(file);
  let table: Record<string, unknown> = {};
  try {
    if (before !== undefined) table = parseToml(before) as Record<string, unknown>;
  } catch (e) {
    throw new SetupError(`${file} does not parse (${(e as Error).message.split('\n')[0]}); nothing changed. Fix it first`);
  }
  const ww = isObject(table.sandbox_workspace_write) ? table.sandbox_workspace_write : {};
  const cur = Array.isArray(ww.agent_writable_roots) ? ww.agent_writable_roots.filter((r): r is string => typeof r === 'string') : [];
  const want = [...cur, ...roots.filter((r) => !cur.includes(r))];
  const after = want.length === cur.length ? (before ?? '') : setTomlKey(before ?? '', 'sandbox_workspace_write', 'agent_writable_roots', JSON.stringify(want));
  checkToml(file, after);
  const got = (parseToml(after) as { sandbox_workspace_write?: { agent_writable_roots?: unknown } }).sandbox_workspace_write?.agent_writable_roots;
  if (JSON.stringify(got) !== JSON.stringify(want))
    throw new SetupError(
      `${file}: cannot add ${roots.join(', ')} to [sandbox_workspace_write] agent_writable_roots by a one-line edit (is the list spread over several lines?); nothing changed. Add it by hand`,
    );
  return {
    file,
    before,
    after,
    roots,
    what: `[sandbox_workspace_write] agent_writable_roots += ${roots.join(', ')} (Claude Code writes its shell snapshot there from inside the shell; writable while it exists)`,
  };
}

function checkToml(file: string, text: string): void {
  try {
    parseToml(text);
  } catch (e) {
    throw new SetupError(
      `${file}: the edited file would not parse (${(e as Error).message.split('\n')[0]}); nothing more changed. Make the change by hand (README: With an agent)`,
    );
  }
}

interface Tracked {
  env: Env;
  id: AgentId;
  tag: string;
  file: string;
  before: string | undefined;
  after: string;
  prev: FileRecord | undefined;
  edits?: AppliedEdit[];
  what: string;
  changes: string[];
}

/** Write a file set-up changes, keeping a copy of it as it first was; the record of it, if set-up owns a change in it. */
function track(t: Tracked): FileRecord | undefined {
  const touched = t.after !== (t.before ?? '') && !(t.before === undefined && t.after === '');
  const edits = t.edits ? { edits: t.edits } : {};
  if (!touched) return t.prev ? { ...t.prev, written: sha(t.after), ...edits } : undefined;
  const mode = t.before !== undefined ? statSync(t.file).mode & 0o777 : undefined;
  const created = t.prev?.createdDirs ?? missingDirs(dirname(t.file));
  let backup = t.prev?.backup;
  if (!t.prev && t.before !== undefined) {
    backup = join(gateHome(t.env), 'setup', `${t.id}.${t.tag}.${basename(t.file)}.orig`);
    writeAtomic(backup, t.before, 0o600);
  }
  writeAtomic(t.file, t.after, mode);
  t.changes.push(`${t.before === undefined ? 'created' : 'edited'} ${t.file}: ${t.what}`);
  const dirs = created.length ? { createdDirs: created } : {};
  return { file: t.file, existed: t.prev ? t.prev.existed : t.before !== undefined, ...(backup ? { backup } : {}), written: sha(t.after), ...edits, ...dirs };
}

/** The folders from `dir` up that do not exist yet, deepest first (what writing a file there creates). */
function missingDirs(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir; !existsSync(d) && dirname(d) !== d; d = dirname(d)) out.push(d);
  return out;
}

function describe(id: AgentId, routes: Route[], inst: Install): string {
  const parts: string[] = [];
  if (id === 'claude-code' && routes.includes('shell')) parts.push(`env.CLAUDE_CODE_SHELL = ${inst.entry}`);
  if (id === 'claude-code' && routes.includes('hook')) parts.push(`hooks.PreToolUse (matcher Bash) runs 'gate hook claude-code'`);
  if (id === 'gemini' && routes.includes('hook')) parts.push(`hooks.BeforeTool (matcher run_shell_command) runs 'gate hook gemini'`);
  if (id === 'codex')
    parts.push(
      "[mcp_servers.gate] runs gate mcp (required, its calls not asked again by Codex, XDG_RUNTIME_DIR/GATE_HOME/GATE_SESSION forwarded); [features] shell_tool = false, unified_exec = false (Codex runs commands through gate-sh's shell tool only)",
    );
  return parts.join('; ');
}

function routeNotes(id: AgentId, routes: Route[], inst: Install): string[] {
  const n: string[] = [];
  if (id === 'claude-code' && routes.includes('shell'))
    n.push(
      `Claude Code still asks its own permission for Bash commands; to leave every Bash command to gate-sh, start it with --allowedTools Bash (or add "Bash" to permissions.allow).`,
    );
  if (id === 'claude-code' && routes.includes('hook'))
    n.push(
      `The hook answers "allow" with each command rewritten to run through gate-sh (updatedInput): gate-sh judges it (a forbidden command is refused with its rule's reason), sandboxes it, checks every program it starts, and asks 'gate approve' where a person must decide.`,
    );
  if (id === 'gemini' && routes.includes('hook'))
    n.push(
      `The hook answers "allow" with each command rewritten to run through gate-sh (hookSpecificOutput.tool_input): gate-sh judges it, sandboxes it, checks every program it starts, and asks 'gate approve' where a person must decide (gemini -p: refused with the reason when nobody is attached).`,
    );
  if (id === 'gemini' && routes.includes('shell'))
    n.push(
      `gemini-cli runs the 'bash' it finds on PATH, and nothing in its settings changes that: start it as  PATH=${dirname(inst.entry)}:$PATH gemini  (for example an alias in your shell's start-up file) to use the shell route too.`,
    );
  if (id === 'codex')
    n.push(
      `Codex runs its built-in shell with your login shell (changing that needs root); this set-up turns the built-in shell off and gives Codex gate-sh's 'shell' tool over MCP instead. Prompts reach you as MCP elicitations.`,
    );
  n.push(`Check with: gate doctor`);
  return n;
}

/** Write the entry point (a symlink to gate-sh, entry.ts says why); true when it was created now. */
function ensureEntry(inst: Install): boolean {
  if (isEntryLink(inst.entry, inst)) return false;
  const there = lstatSync(inst.entry, { throwIfNoEntry: false }) !== undefined;
  if (there && !isOldEntryScript(inst.entry) && !isGateShEntry(inst.entry, inst))
    throw new SetupError(`${inst.entry} exists and is not gate-sh's entry point; nothing changed. Move it away first`);
  mkdirSync(dirname(inst.entry), { recursive: true });
  const tmp = `${inst.entry}.gate-setup-${process.pid}`;
  rmSync(tmp, { force: true });
  symlinkSync(inst.gateSh, tmp);
  renameSync(tmp, inst.entry);
  return !there;
}

/** An entry point an earlier version wrote: a launcher script with ENTRY_MARK. */
function isOldEntryScript(file: string): boolean {
  return existsSync(file) && !lstatSync(file).isSymbolicLink() && readText(file)?.includes(ENTRY_MARK) === true;
}

/** Reverse a set-up. */
export function undoAgent(id: AgentId, env: Env): SetupResult {
  const rec = readRecord(env, id);
  const agent = AGENTS[id];
  if (!rec) return { changes: [`${agent.title} was not set up by gate setup (no record in ${dirname(recordPath(env, id))}); nothing changed`], notes: [] };
  const changes: string[] = [];
  const notes: string[] = [];
  if (rec.settings) undoFile(rec.settings, id === 'codex', changes, notes);
  if (rec.config) undoFile(rec.config, true, changes, notes);
  rmSync(recordPath(env, id), { force: true });
  if (rec.entry && rec.entryCreated) {
    const others = (Object.keys(AGENTS) as AgentId[]).filter((o) => o !== id && readRecord(env, o)?.entry === rec.entry);
    if (others.length) {
      // the other agent's record now owns the entry point
      for (const o of others) {
        const r = readRecord(env, o)!;
        writeAtomic(recordPath(env, o), JSON.stringify({ ...r, entryCreated: true }, null, 2) + '\n', 0o600);
      }
      notes.push(`kept ${rec.entry}: ${others.join(', ')} still use it`);
    } else if (isEntryLink(rec.entry, install(env)) || isOldEntryScript(rec.entry)) {
      rmSync(rec.entry);
      changes.push(`removed ${rec.entry}`);
    }
  }
  return { changes, notes };
}

/** Put back one file set-up changed: the original bytes when nobody touched it since, else only gate-sh's edits out. */
function undoFile(s: FileRecord, toml: boolean, changes: string[], notes: string[]): void {
  const cur = readText(s.file);
  if (cur !== undefined && sha(cur) === s.written) {
    // nobody touched it since: the original, byte for byte
    if (s.existed && s.backup) writeAtomic(s.file, readFileSync(s.backup, 'utf8'), statSync(s.file).mode & 0o777);
    else rmSync(s.file, { force: true });
    changes.push(s.existed ? `restored ${s.file} as it was before set-up` : `removed ${s.file} (set-up had created it)`);
  } else if (cur !== undefined) {
    let text: string;
    if (toml) text = removeTomlEdits(cur);
    else {
      const res = undoEdits(parseJsonSettings(s.file, cur), s.edits ?? []);
      notes.push(...res.kept.map((k) => `${s.file}: ${k}`));
      text = Object.keys(res.root).length === 0 && !s.existed ? '' : JSON.stringify(res.root, null, 2) + '\n';
    }
    if (text === '' && !s.existed) rmSync(s.file, { force: true });
    else writeAtomic(s.file, text, statSync(s.file).mode & 0o777);
    changes.push(`took gate-sh's settings out of ${s.file} (the file had changed since set-up: the rest is kept as it is now)`);
  }
  if (s.backup) rmSync(s.backup, { force: true });
  // ~/.claude or ~/.gemini made for the settings file goes again when nothing else was put in it
  if (!existsSync(s.file))
    for (const d of s.createdDirs ?? []) {
      try {
        rmdirSync(d);
      } catch {
        break; // not empty (the agent wrote its own files there since): kept, and every folder above it
      }
      changes.push(`removed ${d} (set-up had created it)`);
    }
}
