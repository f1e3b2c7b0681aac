/**
 * Network "rules" figures (issue 33): connection set-up through the proxy (bridge in the sandbox, the
 * daemon's proxy, the decision) against the same connection made directly on loopback, p50/p99; a
 * 100 MiB download through the proxy against direct (ROUNDS rounds, each mode once per round, so a busy
 * machine weighs on every mode alike; every figure, the best and the median are printed): plain http
 * forwarded, a CONNECT tunnel (its bytes carried by the daemon's native relay, native/gate_relay.c), and
 * the same tunnel kept in Node (a second daemon with GATE_NET_RELAY=node); 200 parallel connections held
 * through the proxy, with the daemon's CPU time and RSS. "proxy" runs inside a real gate-sh run (bwrap,
 * --unshare-net, gate-netbridge); "direct" is the same client on the host. Servers on 127.0.0.x only
 * (test/network/servers.ts). Prints one JSON object on its last line.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATE_SH } from '../helpers/env.js';
import { killAll, startDaemon } from '../helpers/daemon.js';
import { run } from '../helpers/run.js';
import { makeWorld, RULES } from '../network/servers.js';

const CONNECTIONS = 200;
const SETUPS = 300;
const ROUNDS = Number(process.env.NET_BENCH_ROUNDS ?? 5);

const dir = mkdtempSync(join(tmpdir(), 'gnetb-'));
const w = await makeWorld(join(dir, 'world'));
const d = await startDaemon({ config: '[sandbox_workspace_write]\nnetwork_access = "rules"\n', rules: RULES, workspace: 'ws', args: ['--test-resolver', w.hostsFile] });
const pid = d.child.pid!;
// the same daemon with tunnels kept in Node: what the native relay is measured against
const dNode = await startDaemon({
  config: '[sandbox_workspace_write]\nnetwork_access = "rules"\n',
  rules: RULES,
  workspace: 'ws',
  args: ['--test-resolver', w.hostsFile],
  env: { GATE_NET_RELAY: 'node' },
});

/** node's http client: SETUPS fresh connections, one small GET each, time to the whole answer (ms) */
const setupJs = (direct: boolean) => `
const http = require('http');
const times = [];
(async () => {
  for (let i = 0; i < ${SETUPS}; i++) {
    const t0 = process.hrtime.bigint();
    await new Promise((res, rej) => {
      const o = ${direct} ? { host: '127.0.0.2', port: ${w.webPort}, path: '/hello', agent: false }
        : { host: '127.0.0.1', port: 3128, path: 'http://web.test:${w.webPort}/hello', headers: { Host: 'web.test:${w.webPort}' }, agent: false };
      http.get(o, (r) => { r.resume(); r.on('end', res); }).on('error', rej);
    });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(JSON.stringify(times));
})();`;

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const r2 = (x: number) => Math.round(x * 100) / 100;

// the servers live in this process: every client runs asynchronously (a spawnSync would stall them)
async function viaGate(script: string, through = d): Promise<string> {
  const r = await run(GATE_SH, ['-c', script], { env: through.env, cwd: through.ws, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`gate-sh: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

async function onHost(program: string, args: string[]): Promise<string> {
  const r = await run(program, args, { env: d.env, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`${program}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

function cpuMs(): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, clock ticks of 10 ms
}
const rssMiB = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 102.4) / 10;

try {
  const js = join(dir, 'setup.js');
  writeFileSync(js, setupJs(false));
  const jsDirect = join(dir, 'setup-direct.js');
  writeFileSync(jsDirect, setupJs(true));
  const proxied: number[] = JSON.parse(await viaGate(`node ${js}`));
  const direct: number[] = JSON.parse(await onHost(process.execPath, [jsDirect]));

  const curl = `curl -sS -o /dev/null -w '%{size_download} %{speed_download}\\n' http://web.test:${w.webPort}/big/100`;
  const speed = (out: string) => {
    const [size, bps] = out.trim().split(' ').map(Number);
    if (size !== 100 * 2 ** 20) throw new Error(`downloaded ${size} bytes, not 100 MiB`);
    return r2(bps / 2 ** 20);
  };
  const directCurl = ['-sS', '-o', '/dev/null', '-w', '%{size_download} %{speed_download}\\n', '--noproxy', '*', `http://127.0.0.2:${w.webPort}/big/100`];
  const dl = { direct: [] as number[], plain_http: [] as number[], connect_tunnel: [] as number[], connect_tunnel_in_node: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    dl.direct.push(speed(await onHost('curl', directCurl)));
    dl.plain_http.push(speed(await viaGate(curl)));
    // the same through a CONNECT tunnel (curl --proxytunnel): the path https takes
    dl.connect_tunnel.push(speed(await viaGate(`${curl} -p`)));
    dl.connect_tunnel_in_node.push(speed(await viaGate(`${curl} -p`, dNode)));
  }
  const best = (xs: number[]) => Math.max(...xs);
  const median = (xs: number[]) => pct(xs, 0.5);
  const download = Object.fromEntries(
    Object.entries(dl).map(([k, xs]) => [
      k,
      { MiB_s: xs, best: best(xs), median: median(xs), ratio_best: r2(best(xs) / best(dl.direct)), ratio_median: r2(median(xs) / median(dl.direct)) },
    ]),
  );

  // 200 CONNECT tunnels held open through the proxy, then released by closing stdin
  const holdJs = join(dir, 'hold.js');
  writeFileSync(
    holdJs,
    `const net = require('net'); let up = 0; const socks = [];
for (let i = 0; i < ${CONNECTIONS}; i++) {
  const s = net.connect(3128, '127.0.0.1', () => s.write('CONNECT web.test:${w.webPort} HTTP/1.1\\r\\nHost: web.test\\r\\n\\r\\n'));
  s.once('data', (b) => { if (!String(b).startsWith('HTTP/1.1 200')) throw new Error(String(b)); if (++up === ${CONNECTIONS}) console.log('held'); });
  socks.push(s);
}
process.stdin.on('end', () => { socks.forEach((s) => s.destroy()); }).resume();`,
  );
  const idleCpu0 = cpuMs();
  const rssBefore = rssMiB();
  const hold = spawn(GATE_SH, ['-c', `node ${holdJs}`], { env: d.env, cwd: d.ws, stdio: ['pipe', 'pipe', 'inherit'] });
  const t0 = Date.now();
  await new Promise<void>((res, rej) => {
    hold.stdout!.on('data', (b) => String(b).includes('held') && res());
    hold.once('exit', (c) => rej(new Error(`hold exited ${c}`)));
  });
  const setupMs = Date.now() - t0;
  const cpuSetup = cpuMs() - idleCpu0;
  const rssHeld = rssMiB();
  const cpu1 = cpuMs();
  await new Promise((r) => setTimeout(r, 2000));
  const cpuIdleHeld = cpuMs() - cpu1;
  hold.stdin!.end();
  await new Promise((r) => hold.once('exit', r));

  console.log(
    JSON.stringify({
      setup_ms: {
        proxy_p50: r2(pct(proxied, 0.5)),
        proxy_p99: r2(pct(proxied, 0.99)),
        direct_p50: r2(pct(direct, 0.5)),
        direct_p99: r2(pct(direct, 0.99)),
        connections: SETUPS,
        what: 'a fresh TCP connection and one small GET, to the whole answer; proxy: from inside the sandbox through bridge and proxy',
      },
      download_100MiB: {
        ...download,
        rounds: ROUNDS,
        what: 'curl, MiB/s, each mode once per round; ratios against direct; plain_http: forwarded by the proxy in Node; connect_tunnel: CONNECT, carried by the native relay; connect_tunnel_in_node: the same tunnel piped in Node (GATE_NET_RELAY=node)',
      },
      held_200: {
        connections: CONNECTIONS,
        all_open_after_ms: setupMs,
        daemon_cpu_ms_to_open_all: r2(cpuSetup),
        daemon_cpu_ms_per_s_while_held: r2(cpuIdleHeld / 2),
        daemon_rss_MiB_before: rssBefore,
        daemon_rss_MiB_held: rssHeld,
      },
    }),
  );
} finally {
  await d.close();
  await dNode.close();
  await w.close();
  killAll();
  rmSync(dir, { recursive: true, force: true });
}
