/**
 * The network tests' world, on loopback only: an HTTP server on 127.0.0.2 (a page, a dumb-http git
 * repository, a static npm registry with one small package), an HTTPS server on 127.0.0.3 with a
 * self-signed certificate made here (openssl), an HTTP server on 127.0.0.1, and the test resolver's hosts
 * map naming them (src/network/resolve.ts: `gate daemon run --test-resolver FILE`). Test-only.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { startDaemon, type DaemonOptions, type DaemonProc } from '../helpers/daemon.js';

export interface World {
  dir: string;
  /** the test resolver's hosts map */
  hostsFile: string;
  /** the self-signed certificate (its own CA) of tls.test and other.test */
  caFile: string;
  /** port of the HTTP server on 127.0.0.2 (web.test, stranger.test, denied.test) */
  webPort: number;
  /** port of the HTTPS server on 127.0.0.3 (tls.test, other.test) */
  tlsPort: number;
  /** port of the HTTP server on 127.0.0.1 (loopok.test, loop.test) */
  loopPort: number;
  /** the dumb-http git repository's URL path and its one file's text */
  gitPath: string;
  gitText: string;
  /** the static registry's URL path (npm --registry) and its package */
  npmPath: string;
  npmPackage: string;
  close(): Promise<void>;
}

export const HOSTS = {
  'web.test': '127.0.0.2',
  'stranger.test': '127.0.0.2',
  // asked by prompts.test.ts, one name per answer (no rule names them): stand-ins for public hosts, whose
  // address the proxy does not refuse as loopback once a person approved the name (src/network/resolve.ts)
  'once.test': { as_public: '127.0.0.2' },
  'session.test': { as_public: '127.0.0.2' },
  'saved.test': { as_public: '127.0.0.2' },
  'headless.test': { as_public: '127.0.0.2' },
  'denied.test': '127.0.0.2',
  'tls.test': '127.0.0.3',
  'other.test': '127.0.0.3',
  'loopok.test': '127.0.0.1',
  'loop.test': '127.0.0.1',
  // nowhere.test: allowed by a rule, but not in the map: it does not resolve
};

/** The rules of the tests' daemon. */
export const RULES = [
  'network_rule(host="web.test", protocol="http", decision="allow")',
  'network_rule(host="tls.test", protocol="https", decision="allow")',
  'network_rule(host="loopok.test", protocol="http", decision="allow")',
  'network_rule(host="nowhere.test", protocol="http", decision="allow")',
  'network_rule(host="denied.test", protocol="http", decision="deny")',
];

function listen(s: Server, host: string): Promise<number> {
  return new Promise((resolve) => s.listen(0, host, () => resolve((s.address() as AddressInfo).port)));
}

/** Files under `root` by URL path below `prefix` (no `..`), else 404. */
function staticFiles(root: string, prefix: string, path: string): Buffer | null {
  const rel = normalize(decodeURIComponent(path.slice(prefix.length)));
  if (rel.startsWith('..')) return null;
  const f = join(root, rel);
  return existsSync(f) && statSync(f).isFile() ? readFileSync(f) : null;
}

export async function makeWorld(dir: string): Promise<World> {
  mkdirSync(dir, { recursive: true });
  const hostsFile = join(dir, 'hosts.json');
  writeFileSync(hostsFile, JSON.stringify(HOSTS));
  chmodSync(hostsFile, 0o600);
  // the certificate: its own CA, for tls.test and other.test (so only the proxy's SNI check tells them apart)
  const key = join(dir, 'key.pem');
  const caFile = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', caFile, '-days', '2', '-subj', '/CN=tls.test',
    '-addext', 'subjectAltName=DNS:tls.test,DNS:other.test'], { stdio: 'ignore' });
  // a git repository served as files (dumb http)
  const git = join(dir, 'git');
  const work = join(dir, 'gitwork');
  const gitText = 'hello from the served repository\n';
  const g = (cwd: string, ...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'init.defaultBranch=main', ...args], { cwd, stdio: 'ignore' });
  mkdirSync(work, { recursive: true });
  g(work, 'init', '-q');
  writeFileSync(join(work, 'README'), gitText);
  g(work, 'add', 'README');
  g(work, 'commit', '-qm', 'first');
  mkdirSync(git, { recursive: true });
  g(git, 'clone', '-q', '--bare', work, 'repo.git');
  g(join(git, 'repo.git'), 'update-server-info');
  // a static npm registry: one package, its packument and tarball
  const npm = join(dir, 'npm');
  const pkgSrc = join(dir, 'pkgsrc');
  const npmPackage = 'gate-tiny-pkg';
  mkdirSync(pkgSrc, { recursive: true });
  writeFileSync(join(pkgSrc, 'package.json'), JSON.stringify({ name: npmPackage, version: '1.0.0', main: 'index.js' }));
  writeFileSync(join(pkgSrc, 'index.js'), "module.exports = 'tiny package loaded';\n");
  mkdirSync(join(npm, npmPackage, '-'), { recursive: true });
  const tgzName = execFileSync('npm', ['pack', '--silent', '--pack-destination', join(npm, npmPackage, '-')], { cwd: pkgSrc, encoding: 'utf8' }).trim();
  const tgz = readFileSync(join(npm, npmPackage, '-', tgzName));

  const MiB = Buffer.alloc(1 << 20, 120);
  const web = createServer((req, res) => {
    const url = req.url ?? '/';
    // /big/<n>: n MiB, streamed (the bench's download)
    const big = /^\/big\/(\d{1,4})$/.exec(url);
    if (big) {
      let left = Number(big[1]);
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': left * MiB.length });
      const more = (): void => {
        while (left > 0) {
          left--;
          if (!res.write(MiB)) return void res.once('drain', more);
        }
        res.end();
      };
      more();
      return;
    }
    let body: Buffer | null = null;
    let type = 'application/octet-stream';
    if (url === '/hello') body = Buffer.from(`hello from web.test via ${req.headers.host}\n`);
    else if (url.startsWith('/git/')) body = staticFiles(git, '/git/', url.split('?')[0]);
    else if (url === `/npm/${npmPackage}`) {
      const base = `http://web.test:${webPort}/npm/${npmPackage}/-/${tgzName}`;
      body = Buffer.from(
        JSON.stringify({
          name: npmPackage,
          'dist-tags': { latest: '1.0.0' },
          versions: {
            '1.0.0': {
              name: npmPackage,
              version: '1.0.0',
              main: 'index.js',
              dist: {
                tarball: base,
                shasum: createHash('sha1').update(tgz).digest('hex'),
                integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
              },
            },
          },
        }),
      );
      type = 'application/json';
    } else if (url.startsWith(`/npm/${npmPackage}/-/`)) body = staticFiles(npm, '/npm/', url);
    if (body === null) {
      res.writeHead(404).end('not found\n');
      return;
    }
    res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length }).end(body);
  });
  const webPort = await listen(web, '127.0.0.2');
  const tls = createTlsServer({ key: readFileSync(key), cert: readFileSync(caFile) }, (req, res) =>
    res.end(`hello over tls, SNI ${(req.socket as { servername?: string }).servername}\n`),
  );
  const tlsPort = await listen(tls, '127.0.0.3');
  const loop = createServer((_req, res) => res.end('hello from the host loopback\n'));
  const loopPort = await listen(loop, '127.0.0.1');
  return {
    dir,
    hostsFile,
    caFile,
    webPort,
    tlsPort,
    loopPort,
    gitPath: '/git/repo.git',
    gitText,
    npmPath: '/npm/',
    npmPackage,
    close: async () => {
      for (const s of [web, tls, loop]) {
        s.closeAllConnections();
        await new Promise((r) => s.close(r));
      }
    },
  };
}

/** A world in a temporary folder of its own (named `prefix`...) and a daemon whose test resolver reads its
 * hosts map, made in that order (the daemon reads the map when it starts); close() takes both down and
 * removes the folder. For a file's before() and after(). */
export async function worldAndDaemon(
  prefix: string,
  daemon: (w: World) => DaemonOptions,
): Promise<{ w: World; d: DaemonProc; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const w = await makeWorld(dir);
  const o = daemon(w);
  const d = await startDaemon({ ...o, args: [...(o.args ?? []), '--test-resolver', w.hostsFile] });
  return {
    w,
    d,
    async close() {
      await d.close();
      await w.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
