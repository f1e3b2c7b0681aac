/**
 * The installable package: `npm pack` of this checkout, `npm install -g` of the tarball into a temporary
 * prefix (native parts built at install), then `gate-sh` and `gate` from PATH in an unrelated folder.
 * Tests talk only to this machine: the dependencies come from npm's cache (filled by this checkout's own
 * `npm install`), found through a loopback registry that answers the package documents from
 * package-lock.json (versions, dependencies and integrity; npm then takes each tarball from its cache by
 * integrity and never asks the registry for one).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ROOT } from '../helpers/env.js';

/** The packages whose install scripts a global install must run, as the README's install line names them. */
const ALLOW_SCRIPTS = 'gate-sh,node-pty,unix-dgram';

interface LockEntry {
  version: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, unknown>;
  bin?: Record<string, string> | string;
  engines?: Record<string, string>;
  os?: string[];
  cpu?: string[];
  hasInstallScript?: boolean;
  link?: boolean;
}

/** name → version → package document entry, from every package-lock.json entry (nested ones too). */
function packuments(base: string): Map<string, Record<string, unknown>> {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const docs = new Map<string, Record<string, unknown>>();
  for (const [path, e] of Object.entries(lock.packages)) {
    if (!path || e.link || !e.integrity) continue;
    const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const doc = docs.get(name) ?? { name, 'dist-tags': {}, versions: {} as Record<string, unknown> };
    const { integrity, link: _link, ...fields } = e;
    (doc.versions as Record<string, unknown>)[e.version] = {
      name,
      ...fields,
      // npm takes a dependency's install scripts from its package document: the real ones, from node_modules
      ...(e.hasInstallScript ? { scripts: (JSON.parse(readFileSync(join(ROOT, path, 'package.json'), 'utf8')) as { scripts?: unknown }).scripts } : {}),
      dist: { integrity, tarball: `${base}/${name}/-/${name.split('/').pop()}-${e.version}.tgz` },
    };
    (doc['dist-tags'] as Record<string, string>).latest = e.version;
    docs.set(name, doc);
  }
  return docs;
}

/** A loopback registry with the package documents only. */
async function lockRegistry(): Promise<{ url: string; misses: string[]; server: Server }> {
  const misses: string[] = [];
  let docs = new Map<string, Record<string, unknown>>();
  const server = createServer((req, res) => {
    const name = decodeURIComponent((req.url ?? '/').slice(1).split('?')[0]);
    const doc = docs.get(name);
    if (doc) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(doc));
    } else {
      // an unknown document is a package the lockfile does not hold (an optional peer npm looks up); a
      // tarball means npm's cache missed, and then the install would need the real registry
      if (name.includes('/-/')) misses.push(name);
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  docs = packuments(url);
  return { url, misses, server };
}

function run(
  cmd: string,
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; timeout?: number },
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    // a process group of its own: at the time limit npm and everything it started (node-gyp, make, a
    // daemon) is killed, not npm alone with its children holding the pipes open and the test waiting
    const c = spawn(cmd, args, { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    const kill = () => {
      try {
        process.kill(-c.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    };
    const timer = setTimeout(kill, o.timeout ?? 60_000);
    // after the exit, whatever of the group still holds the pipes gets a short while, then is killed
    c.on('exit', () => (clearTimeout(timer), setTimeout(kill, 5_000).unref()));
    c.on('close', (status) => (clearTimeout(timer), resolve({ status, stdout, stderr })));
  });
}

test('npm pack → npm install -g into a temp prefix → gate-sh and gate work from PATH in any folder', { timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'g-pack-'));
  const reg = await lockRegistry();
  // Node's own headers for node-gyp (no header download), as scripts/build-native.mjs does
  const prefix = join(dirname(process.execPath), '..');
  const nodedir = existsSync(join(prefix, 'include', 'node', 'node_api.h')) ? { npm_config_nodedir: prefix } : {};
  const npmEnv = {
    ...process.env,
    ...nodedir,
    npm_config_registry: reg.url,
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  };
  const prefixDir = join(dir, 'prefix');
  const env = {
    PATH: `${join(prefixDir, 'bin')}:/usr/local/bin:/usr/bin:/bin`,
    HOME: join(dir, 'home'),
    GATE_HOME: join(dir, 'gh'),
    CODEX_HOME: join(dir, 'codex'),
    XDG_RUNTIME_DIR: join(dir, 'run'),
    LANG: 'C.UTF-8',
  };
  try {
    // the tarball of this checkout as built (`npm test` built it; --ignore-scripts: no rebuild under running tests)
    const pack = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, env: npmEnv });
    assert.equal(pack.status, 0, pack.stderr);
    const info = JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    const files = info[0].files.map((f) => f.path);
    const tgz = join(dir, info[0].filename);
    assert.match(info[0].filename, /^gate-sh-\d+\.\d+\.\d+\.tgz$/);
    // what runs, and nothing else: no tests, no TypeScript sources, no build output of this machine
    for (const want of [
      'bin/gate-sh-node',
      'bin/gate',
      'shims/gate-sh-native.c',
      'dist/src/cli/gate-sh.js',
      'dist/cjs-src/cli/gate-sh.bundle.cjs',
      'shims/Makefile',
      'shims/libgate.c',
      'native/gate_native.c',
      'binding.gyp',
      'scripts/build-native.mjs',
    ])
      assert.ok(files.includes(want), `${want} missing from the tarball`);
    const extra = files.filter((f) => /^(test|src|dist\/test|build|node_modules|scratch)\/|\.ts$|\.so$|^shims\/(gate-shell|gate-sh-native)$/.test(f));
    assert.deepEqual(extra, [], 'files that do not run');

    const inst = await run('npm', ['install', '-g', '--prefer-offline', `--allow-scripts=${ALLOW_SCRIPTS}`, '--prefix', prefixDir, tgz], {
      cwd: dir,
      env: npmEnv,
      timeout: 540_000,
    });
    assert.equal(inst.status, 0, `npm install -g failed (tarballs not in npm's cache: ${reg.misses.join(', ')}):\n${inst.stderr.slice(-3000)}`);
    assert.deepEqual(reg.misses, [], 'tarballs asked of the registry');
    const pkg = join(prefixDir, 'lib', 'node_modules', 'gate-sh');
    for (const built of [
      'shims/libgate.so',
      'shims/gate-shell',
      'shims/gate-sh-native',
      'build/Release/gate_native.node',
      'node_modules/node-pty/build/Release/pty.node',
      'node_modules/unix-dgram/build/Release/unix_dgram.node',
    ])
      assert.ok(existsSync(join(pkg, built)), `${built} not built at install`);

    // gate-sh on PATH is the native entry (npm pack drops the bin/gate-sh link; the install step puts it back)
    assert.equal(realpathSync(join(prefixDir, 'bin', 'gate-sh')), join(realpathSync(pkg), 'shims', 'gate-sh-native'));
    // from an unrelated folder, with only the prefix's bin and the system on PATH
    const work = join(dir, 'elsewhere');
    mkdirSync(work);
    writeFileSync(join(work, 'a-file'), '');
    const rules = join(dir, 'forbid.rules');
    writeFileSync(rules, 'prefix_rule(pattern=["rm", "-rf"], decision="forbidden", justification="no recursive deletes")\n');
    mkdirSync(env.XDG_RUNTIME_DIR, { mode: 0o700 });
    mkdirSync(env.HOME);
    const sh = await run('gate-sh', ['-lc', 'echo ok'], { cwd: work, env });
    assert.equal(sh.stdout, 'ok\n', sh.stderr);
    assert.equal(sh.status, 0);
    const explain = await run('gate', ['explain', '--json', '--', 'bash', '-lc', 'ls'], { cwd: work, env });
    assert.equal(explain.status, 0, explain.stderr);
    assert.equal(JSON.parse(explain.stdout).decision, 'allow');
    const check = await run('gate', ['policy', 'check', '--rules', rules, '--', 'rm', '-rf', '/'], { cwd: work, env });
    assert.equal(check.status, 0, check.stderr);
    assert.equal(JSON.parse(check.stdout).decision, 'forbidden');
    const v = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
    assert.equal((await run('gate-sh', ['--version'], { cwd: work, env })).stdout, `gate-sh ${v} (a gated GNU bash)\n`);
    assert.equal((await run('gate', ['--version'], { cwd: work, env })).stdout, `gate (gate-sh) ${v}\n`);
  } finally {
    // keep-alive connections (npm's) would hold the test process open long after a failure
    reg.server.closeAllConnections();
    reg.server.close();
    if (existsSync(join(prefixDir, 'bin', 'gate'))) await run('gate', ['daemon', 'stop'], { cwd: dir, env });
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the tarball names its version from package.json, as gate-sh --version does', () => {
  const v = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
  const r = spawnSync('npm', ['pack', '--dry-run', '--ignore-scripts', '--json'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal((JSON.parse(r.stdout) as Array<{ filename: string }>)[0].filename, `gate-sh-${v}.tgz`);
});
