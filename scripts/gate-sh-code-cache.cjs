// node scripts/gate-sh-code-cache.cjs trained|daemon|hook|eager BUNDLE CACHE ID — run by scripts/bundle-gate-sh.mjs at
// build time (each kind in its own process: V8 would reuse a script it has already compiled).
// Writes the V8 code cache bin/gate-sh compiles gate-sh's bundle with: `ID\n` then V8's data.
// The cache is trained: the bundle is compiled exactly as bin/gate-sh compiles it, its gateSh() runs
// `-c true` against real daemons in throwaway homes (danger-full-access, and workspace-write where
// bubblewrap works), and the cache then holds the functions those runs compiled — the hot path, and not
// the PTY host or the REPL. Measured: CPU over `node -e 0` +21 ms trained, +31 ms with every function
// compiled eagerly (a 2.7x larger cache), +36 ms without a cache. `eager` is the fallback when no daemon
// can run at build time. Exit status 0 when the cache is written.
'use strict';
const { spawn } = require('node:child_process');
const { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { tmpdir } = require('node:os');
const { join, resolve } = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');

const [kind, bundleArg, cacheArg, id] = process.argv.slice(2);
const BUNDLE = resolve(bundleArg);
const GATE = resolve(__dirname, '..', 'bin', 'gate');
const source = readFileSync(BUNDLE, 'utf8');
const daemons = [];
process.on('exit', () => daemons.forEach((d) => d.kill('SIGKILL')));

/** The bundle compiled and run as the launcher does (bin/gate-sh-node's loadBundle): its script and module. */
function loaded() {
  const script = new vm.Script(Module.wrap(source), { filename: BUNDLE });
  const mod = { exports: {} };
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(BUNDLE), mod, BUNDLE, join(BUNDLE, '..'));
  return { script, mod };
}

/** The training daemons stopped, and waited for. */
async function stopDaemons() {
  daemons.forEach((d) => d.kill('SIGTERM'));
  await Promise.all(daemons.map((d) => (d.exitCode === null ? new Promise((r) => d.once('exit', r)) : null)));
  daemons.length = 0;
}

/** A daemon in a throwaway home (short paths: sun_path); resolves its environment once it listens. */
async function daemon(root, mode, rules, approvalPolicy = 'never') {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GATE_')) env[k] = v;
  Object.assign(env, {
    HOME: join(root, mode, 'h'),
    GATE_HOME: join(root, mode, 'g'),
    CODEX_HOME: join(root, mode, 'c'),
    XDG_RUNTIME_DIR: join(root, mode, 'r'),
    GATE_SANDBOX_MODE: mode,
    GATE_APPROVAL_POLICY: approvalPolicy,
    GATE_NO_AUTOSTART: '1',
  });
  for (const d of [env.HOME, env.XDG_RUNTIME_DIR]) mkdirSync(d, { recursive: true, mode: 0o700 });
  if (rules) {
    mkdirSync(join(env.GATE_HOME, 'rules'), { recursive: true });
    writeFileSync(join(env.GATE_HOME, 'rules', 'train.rules'), rules);
  }
  const child = spawn(process.execPath, [GATE, 'daemon', 'run', '--no-terminal'], { env, stdio: 'ignore' });
  daemons.push(child);
  const sock = join(env.XDG_RUNTIME_DIR, 'gate-sh', 'default', 'req', 'request.sock');
  for (let i = 0; i < 200 && !existsSync(sock) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 50));
  if (!existsSync(sock)) throw new Error(`the ${mode} daemon did not start`);
  return env;
}

async function trained() {
  const { script, mod } = loaded();
  const root = mkdtempSync(join(tmpdir(), 'gsc-'));
  try {
    const [full, ws] = await Promise.allSettled([daemon(root, 'danger-full-access'), daemon(root, 'workspace-write')]);
    if (full.status !== 'fulfilled') throw full.reason;
    const { gateSh } = mod.exports;
    await gateSh(['--version'], full.value, 'gate-sh');
    // twice each: a run whose daemon is still warming up is not what gate-sh's hot path looks like
    for (let i = 0; i < 2; i++) if ((await gateSh(['-c', 'true'], full.value, 'gate-sh')) !== 0) throw new Error('the training run failed');
    if (ws.status === 'fulfilled') for (let i = 0; i < 2; i++) await gateSh(['-c', 'true'], ws.value, 'gate-sh');
    return script.createCachedData();
  } finally {
    await stopDaemons();
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The daemon's bundle (dist/cjs-src/daemon/daemon.bundle.cjs, `gate daemon run`): this process runs the
 * daemon from the bundle in a throwaway home until it answers, has gate-sh run `-c true` and `-lc true`
 * against it twice each (a pre-flight with its plan, run-finished, the start-up phase), and keeps what that
 * compiled: the start, the first decision and the request path.
 */
async function daemonTrained() {
  const { script, mod } = loaded();
  const root = mkdtempSync(join(tmpdir(), 'gdc-'));
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GATE_')) env[k] = v;
  Object.assign(env, { HOME: join(root, 'h'), GATE_HOME: join(root, 'g'), CODEX_HOME: join(root, 'c'), XDG_RUNTIME_DIR: join(root, 'r'), GATE_SANDBOX_MODE: 'danger-full-access', GATE_APPROVAL_POLICY: 'never', GATE_NO_AUTOSTART: '1' });
  for (const d of [env.HOME, env.XDG_RUNTIME_DIR]) mkdirSync(d, { recursive: true, mode: 0o700 });
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
  try {
    void mod.exports.run({ sub: 'run', 'no-terminal': true });
    const sock = join(env.XDG_RUNTIME_DIR, 'gate-sh', 'default', 'req', 'request.sock');
    for (let i = 0; i < 400 && !existsSync(sock); i++) await new Promise((r) => setTimeout(r, 50));
    if (!existsSync(sock)) throw new Error('the daemon did not start from its bundle');
    const gateSh = resolve(__dirname, '..', 'bin', 'gate-sh');
    for (const args of [['-c', 'true'], ['-lc', 'true'], ['-c', 'true'], ['-lc', 'true']]) {
      const code = await new Promise((r) => spawn(gateSh, args, { env, cwd: root, stdio: 'ignore' }).on('exit', r));
      if (code !== 0) throw new Error(`the training run gate-sh ${args.join(' ')} failed (${code})`);
    }
    return script.createCachedData();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * `gate hook`'s bundle (dist/cjs-src/cli/hook.bundle.cjs): its answer() for Claude Code and gemini-cli hook
 * inputs against a real daemon with a forbidden and an allowed rule (allow by rule, deny by rule, allow of a
 * command gate-sh would ask about, rewritten through gate-sh; another tool, bad input), twice each, so the
 * cache holds what a hook call compiles.
 */
async function hookTrained() {
  const { script, mod } = loaded();
  const root = mkdtempSync(join(tmpdir(), 'ghc-'));
  try {
    const rules = 'prefix_rule(pattern=["rm"], decision="forbidden", justification="x")\nprefix_rule(pattern=["git", "status"], decision="allow")\n';
    // the default policies (on-request, workspace-write), so a command gate-sh would ask about is judged so
    const env = await daemon(root, 'workspace-write', rules, 'on-request').catch(() => daemon(root, 'danger-full-access', rules, 'on-request'));
    const inputs = [];
    for (const command of ['git status && echo ok', 'rm -rf f', 'curl -s http://127.0.0.1:9/ | sh']) {
      inputs.push(['claude-code', JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, cwd: root })]);
      inputs.push(['gemini', JSON.stringify({ hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command }, cwd: root })]);
    }
    inputs.push(['claude-code', JSON.stringify({ tool_name: 'Read', tool_input: {} })], ['gemini', 'not json']);
    const seen = new Set();
    for (let i = 0; i < 2; i++)
      for (const [agent, input] of inputs) {
        const out = JSON.stringify(await mod.exports.answer(agent, input, env, root));
        if (/not running|did not answer|cannot reach/.test(out)) throw new Error(`the training hook found no daemon: ${out}`);
        seen.add(/"(allow|deny|ask)"/.exec(out)?.[1] ?? '{}');
      }
    if (seen.size !== 3) throw new Error(`the training hook answers were not allow, deny and {}: ${[...seen].join(', ')}`);
    return script.createCachedData();
  } finally {
    await stopDaemons();
    rmSync(root, { recursive: true, force: true });
  }
}

/** Every function compiled eagerly; V8's flag put back before serialising (the cache records the flags). */
function eager() {
  v8.setFlagsFromString('--no-lazy');
  const script = new vm.Script(Module.wrap(source), { filename: BUNDLE });
  v8.setFlagsFromString('--lazy');
  return script.createCachedData();
}

(async () => {
  const data =
    kind === 'trained' ? await trained() : kind === 'daemon' ? await daemonTrained() : kind === 'hook' ? await hookTrained() : eager();
  writeFileSync(cacheArg, Buffer.concat([Buffer.from(`${id}\n`, 'latin1'), data]));
  process.exit(0);
})().catch((e) => {
  process.stderr.write(`gate-sh: ${e.message}\n`);
  process.exit(1);
});
