/**
 * `gate`: the admin CLI's entry (bin/gate imports it; `gate hook` never comes here). Commands a person types
 * go to the yargs program (src/cli/gate-cli.ts, loaded from its bundle with its V8 code cache); two that
 * programs start are run without loading yargs: `gate daemon run` as the autostart spawns it (a first
 * gate-sh run waits for it; its options are the table yargs declares too, src/cli/args/daemon.ts) and
 * `gate policy check`, Codex's `execpolicy check` with clap's own parsing (measured against `node -e 0`).
 * Each command's module is loaded only when it runs. Not pure (loads and runs code); no trust boundary.
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { RUN_OPTIONS } from './args/daemon.js';
import type { Context } from './args/spec.js';
import { errorLine } from './errors.js';

/** Commands bundled into one CommonJS file for start-up speed (scripts/bundle-gate-sh.mjs). */
const BUNDLED = new Set(['policy']);
/** ... and those whose bundle has a V8 code cache beside it, at dist/cjs-src/<folder>/<name>.bundle.cjs (the
 * depth of dist/src/<folder>/, so paths computed from import.meta.url hold): the daemon, whose start an
 * autostarting gate-sh waits for (docs/startup.md) */
const CACHED: Record<string, string> = { daemon: 'daemon' };

/** A command's module (src/cli/commands/<name>.js), from its bundle where it has one. */
export async function load(name: string): Promise<unknown> {
  if (!/^[a-z-]+$/.test(name)) throw new Error(`no command module '${name}'`);
  if (Object.hasOwn(CACHED, name) && !process.env.GATE_NO_BUNDLE) {
    const { loadBundle } = await import('./code-cache.js');
    const bundled = loadBundle(fileURLToPath(new URL(`../../cjs-src/${CACHED[name]}/${name}.bundle.cjs`, import.meta.url)));
    if (bundled) return bundled;
  }
  if (BUNDLED.has(name)) {
    try {
      // required, not imported: one file, no ESM loader per module
      return createRequire(import.meta.url)(`../../cjs-src/cli/commands/${name}.bundle.cjs`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  return import(`./commands/${name}.js`);
}

/** The yargs program: its bundle (yargs inside, with a code cache), else its module graph. */
async function cli(): Promise<typeof import('./gate-cli.js')> {
  if (!process.env.GATE_NO_BUNDLE) {
    const { loadBundle } = await import('./code-cache.js');
    const bundled = loadBundle(fileURLToPath(new URL('../../cjs-src/cli/gate-cli.bundle.cjs', import.meta.url)));
    if (bundled) return bundled as typeof import('./gate-cli.js');
  }
  return import('./gate-cli.js');
}

/** `gate daemon run`'s options when they are exactly what RUN_OPTIONS declares; undefined for yargs to check. */
function daemonRunArgs(rest: string[]): import('./args/daemon.js').DaemonArgs | undefined {
  const options = Object.fromEntries(
    Object.entries(RUN_OPTIONS).map(([k, [kind]]) => [k, kind === 'flag' ? { type: 'boolean' as const } : { type: 'string' as const, multiple: kind === 'list' }]),
  );
  try {
    const { values } = parseArgs({ args: rest, options, strict: true, allowPositionals: false });
    if (Object.values(values).some((v) => v === '')) return undefined;
    return { sub: 'run', ...(values as Record<string, string | boolean | string[]>) };
  } catch {
    return undefined;
  }
}

async function dispatch(argv: string[]): Promise<number> {
  const [a, b, ...rest] = argv;
  // the version alone needs no command line (the same line the yargs program's `version` prints)
  if (argv.length === 1 && (a === '--version' || a === '-v' || a === 'version')) {
    const { versionLine } = await import('./version.js');
    process.stdout.write(versionLine());
    return 0;
  }
  if (a === 'daemon' && b === 'run') {
    const values = daemonRunArgs(rest);
    if (values) return ((await load('daemon')) as typeof import('./commands/daemon.js')).run(values);
  }
  if (a === 'policy' && b === 'check') {
    const policy = (await load('policy')) as typeof import('./commands/policy.js');
    let help = false;
    try {
      help = policy.parseCheckArgs(rest) === 'help';
    } catch {
      /* check() reports it */
    }
    if (!help) return policy.check(rest);
  }
  const ctx: Context = { load, argv };
  return (await cli()).runGate(argv, ctx);
}

export async function main(argv: string[]): Promise<void> {
  try {
    process.exitCode = await dispatch(argv);
  } catch (e) {
    process.stderr.write(errorLine(e));
    if (process.env.GATE_DEBUG) console.error(e);
    process.exitCode = 1;
  }
}
