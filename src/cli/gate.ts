/**
 * `gate`: the admin CLI. Each subcommand lives in its own module under ./commands and is loaded only when
 * used, so `gate policy check` does not pay for yargs or the daemon.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
export interface Command {
  /** argv after the subcommand name; resolves to the exit status */
  run(argv: string[]): Promise<number>;
}

const COMMANDS: Record<string, { summary: string; load: () => Promise<Command> }> = {
  policy: { summary: 'check commands against rule files (Codex-compatible JSON)', load: () => load('policy') },
  explain: { summary: 'why a script gets its decisions', load: () => load('explain') },
  daemon: { summary: 'run, start, stop or inspect the escalation daemon', load: () => load('daemon') },
  reload: { summary: 'reload the rule files now (and check config.toml); a broken file is named', load: () => load('reload') },
  status: { summary: 'the daemon: policy files, approval and sandbox policy, approvers, pending prompts', load: () => load('status') },
  jobs: { summary: "background jobs in this session's sandboxes; 'gate jobs kill <pid|all>' ends them", load: () => load('jobs') },
  approve: { summary: 'approval console: answer pending prompts', load: () => load('approve') },
  config: { summary: 'show or change the session configuration at run time', load: () => load('config') },
  log: { summary: 'read the audit log', load: () => load('log') },
  mcp: { summary: 'MCP server on stdio with a gated shell tool', load: () => load('mcp') },
  host: { summary: 'JSON-RPC host API on stdio (approvals, policy updates)', load: () => load('host') },
  setup: { summary: 'wire gate-sh into an agent (claude-code, codex, gemini; shell: any other); --undo reverses it', load: () => load('setup') },
  doctor: { summary: 'per agent on this machine: is gate-sh wired in, would the agent really use it', load: () => load('doctor') },
  hook: { summary: "answer an agent's permission hook (claude-code, gemini) from gate-sh's rules", load: () => load('hook') },
};

/** Commands bundled into one CommonJS file for start-up speed (scripts/bundle-gate-sh.mjs). */
const BUNDLED = new Set(['policy']);
/** ... and those whose bundle has a V8 code cache beside it, at dist/cjs-src/<folder>/<name>.bundle.cjs (the
 * depth of dist/src/<folder>/, so paths computed from import.meta.url hold): the daemon, whose start an
 * autostarting gate-sh waits for (docs/startup.md) */
const CACHED: Record<string, string> = { daemon: 'daemon' };

/** Dynamic so each command module is only compiled in and loaded when it exists and is used. */
async function load(name: string): Promise<Command> {
  if (Object.hasOwn(CACHED, name) && !process.env.GATE_NO_BUNDLE) {
    const { loadBundle } = await import('./code-cache.js');
    const bundled = loadBundle(fileURLToPath(new URL(`../../cjs-src/${CACHED[name]}/${name}.bundle.cjs`, import.meta.url)));
    if (bundled) return bundled as Command;
  }
  if (BUNDLED.has(name)) {
    try {
      // required, not imported: one file, no ESM loader per module
      return createRequire(import.meta.url)(`../../cjs-src/cli/commands/${name}.bundle.cjs`) as Command;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  return (await import(`./commands/${name}.js`)) as Command;
}

export function usage(): string {
  const w = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return [
    'usage: gate <command> [options]',
    '',
    'commands:',
    ...Object.entries(COMMANDS).map(([k, c]) => `  ${k.padEnd(w)}  ${c.summary}`),
    '',
    "run 'gate help <command>' (or 'gate <command> --help') for a command's options; 'gate --version' (-v) for the version",
  ].join('\n');
}

export async function main(argv: string[]): Promise<void> {
  let [name, ...rest] = argv;
  // `gate help <command>`: that command's own help
  if (name === 'help' && rest.length > 0 && Object.hasOwn(COMMANDS, rest[0])) [name, rest] = [rest[0], ['--help']];
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    process.exitCode = name ? 0 : 2;
    return;
  }
  if (name === '--version' || name === '-V' || name === '-v' || name === 'version') {
    const { version } = await import('./version.js');
    process.stdout.write(`gate (gate-sh) ${version()}\n`);
    return;
  }
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) {
    process.stderr.write(`gate-sh: unknown command '${name}'\n${usage()}\n`);
    process.exitCode = 2;
    return;
  }
  try {
    const mod = await cmd.load();
    process.exitCode = await mod.run(rest);
  } catch (e) {
    process.stderr.write(`gate-sh: ${e instanceof Error ? e.message : String(e)}\n`);
    if (process.env.GATE_DEBUG) console.error(e);
    process.exitCode = 1;
  }
}
