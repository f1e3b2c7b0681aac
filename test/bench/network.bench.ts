/**
 * Network "rules" figures (issue 33): connection set-up through the proxy (bridge in the sandbox, the
 * daemon's proxy, the decision) against the same connection made directly on loopback, p50/p99; a
 * 100 MiB download through the proxy against direct (ROUNDS rounds, each mode once per round, so a busy
 * machine weighs on every mode alike; every figure, the best and the median are printed): plain http
 * (the request decided in the daemon, the answer's body by the native relay; on the handed-over listener
 * and through the bridge), a CONNECT tunnel (its bytes carried by the daemon's native relay, native/gate_relay.c), and
 * the same tunnel kept in Node (a second daemon with GATE_NET_RELAY=node); 200 parallel connections held
 * through the proxy, with the daemon's CPU time and RSS. "proxy" runs inside a real gate-sh run (bwrap,
 * --unshare-net, gate-netbridge); "direct" is the same client on the host. And what one command costs
 * (`gate-sh -c true`) under "rules" — a sandbox of its own with the bridge, as every such run has —
 * against a run under network off that joins the session sandbox and one that builds its own, beside what
 * a network namespace alone costs (`unshare -rn true` against `unshare -r true`): the figures behind not
 * joining a session sandbox under "rules" (docs/network.md). The load average is printed before and
 * after each part. And the floor (part `floor`, not run by default): the same download through a bare
 * TCP relay of our own (programs/relay-floor.c) in each of its modes, beside direct and the CONNECT
 * tunnel: what any user-space relay reaches on this machine. NET_BENCH_PARTS (comma-separated: setup,
 * download, floor, held, per_command) runs only those; NET_FLOOR_MODES (`;`-separated) sets the floor's
 * relay configurations. Servers on 127.0.0.x only (test/network/servers.ts). Prints one JSON object on its last line.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { GATE_SH, ROOT } from '../helpers/env.js';
import { killAll, startDaemon } from '../helpers/daemon.js';
import { run } from '../helpers/run.js';
import { makeWorld, RULES } from '../network/servers.js';

const CONNECTIONS = 200;
const SETUPS = 300;
const ROUNDS = Number(process.env.NET_BENCH_ROUNDS ?? 5);
const COMMAND_ROUNDS = Number(process.env.NET_BENCH_COMMAND_ROUNDS ?? 30);
/** relay-floor's configurations (mode and options, programs/relay-floor.c), `;`-separated in NET_FLOOR_MODES;
 * by default sockmap only as root (loading its BPF program needs CAP_BPF and CAP_NET_ADMIN) */
const FLOOR_MODES = (
  process.env.NET_FLOOR_MODES ??
  `copy;copy-threads;copy-threads buf=262144;copy-threads rcvbuf=4194304 sndbuf=4194304;splice;splice-threads;zc${process.getuid?.() === 0 ? ';sockmap;sockmap parser=1' : ''}`
).split(';');
const PARTS = new Set((process.env.NET_BENCH_PARTS ?? 'setup,download,held,per_command').split(','));
const load = () => loadavg().map((x) => Math.round(x * 100) / 100);

const dir = mkdtempSync(join(tmpdir(), 'gnetb-'));
const w = await makeWorld(join(dir, 'world'));
/** a daemon whose network is "rules", resolving the test's names, with these variables */
const rulesDaemon = (env: Record<string, string>) =>
  startDaemon({ config: '[sandbox_workspace_write]\nnetwork_access = "rules"\n', rules: RULES, workspace: 'ws', args: ['--test-resolver', w.hostsFile], env });
const d = await rulesDaemon({ GATE_NET_HANDOFF: 'on' });
const pid = d.child.pid!;
// the same daemon whose runs' bridges keep their listeners and relay every connection (no hand-over:
// listener-handoff.ts): the path before the hand-over, a tunnel's bytes through the bridge's pipes
const dBridge = await rulesDaemon({ GATE_NET_HANDOFF: 'off' });
// the same daemon whose relay splices bulk halves too (GATE_RELAY_COPY=off: native/gate_relay.c's copy mode)
const dSplice = await rulesDaemon({ GATE_NET_HANDOFF: 'on', GATE_RELAY_COPY: 'off' });
// the same daemon with tunnels kept in Node: what the native relay is measured against
const dNode = await rulesDaemon({ GATE_NET_RELAY: 'node', GATE_NET_HANDOFF: 'on' });

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
/** bubblewrap failing to mask a socket that another process's folder under /tmp removed meanwhile (a
 * shared machine's flake, not the network's): that run is made again, and counted */
const MASK_FLAKE = /^bwrap: Can't bind mount \/oldroot\/dev\/null on /;
let flakes = 0;
async function gateRun(args: string[], env: Record<string, string>, cwd: string) {
  for (let i = 0; ; i++) {
    const r = await run(GATE_SH, args, { env, cwd, timeoutMs: 300_000 });
    if (r.code === 0 || i === 2 || !MASK_FLAKE.test(r.stderr)) return r;
    flakes++;
  }
}

async function viaGate(script: string, through = d): Promise<string> {
  const r = await gateRun(['-c', script], through.env, through.ws);
  if (r.code !== 0) throw new Error(`gate-sh: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

async function onHost(program: string, args: string[]): Promise<string> {
  const r = await run(program, args, { env: d.env, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`${program}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

/** CPU time (ns) that every thread of process `p`, and its relay thread (gate-relay), have run so far
 * (schedstat: exact, not in clock ticks) */
function runNs(p: number): { all: number; relay: number } {
  const ns = { all: 0, relay: 0 };
  for (const t of readdirSync(`/proc/${p}/task`)) {
    try {
      const n = Number(readFileSync(`/proc/${p}/task/${t}/schedstat`, 'utf8').split(' ')[0]);
      ns.all += n;
      if (readFileSync(`/proc/${p}/task/${t}/comm`, 'utf8').trim() === 'gate-relay') ns.relay += n;
    } catch {
      /* the thread ended meanwhile */
    }
  }
  return ns;
}

/** CPU time (ns) that the kernel's worker and softirq threads (kworker/*, ksoftirqd/*) have run so far, all of
 * them: where a sockmap relay's bytes are sent (sk_psock_backlog runs in a kworker); every other process's
 * kernel work on this shared machine is in it too */
function kthreadNs(): number {
  let ns = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const comm = readFileSync(`/proc/${p}/comm`, 'utf8');
      if (comm.startsWith('kworker') || comm.startsWith('ksoftirqd')) ns += Number(readFileSync(`/proc/${p}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      /* ended meanwhile */
    }
  }
  return ns;
}

function cpuMs(): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime + stime, clock ticks of 10 ms
}
const rssMiB = () => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 102.4) / 10;

/** `gate-sh -c true`, spawned and waited for (ms) */
async function oneCommand(env: Record<string, string>, cwd: string): Promise<number> {
  const t0 = performance.now();
  const r = await gateRun(['-c', 'true'], env, cwd);
  if (r.code !== 0) throw new Error(`gate-sh -c true: exit ${r.code}: ${r.stderr}`);
  return performance.now() - t0;
}

async function timed(program: string, args: string[]): Promise<number> {
  const t0 = performance.now();
  const r = await run(program, args, { env: d.env, timeoutMs: 60_000 });
  if (r.code !== 0) throw new Error(`${program}: exit ${r.code}: ${r.stderr}`);
  return performance.now() - t0;
}

const best = (xs: number[]) => Math.max(...xs);
const median = (xs: number[]) => pct(xs, 0.5);

// the 100 MiB download (parts download and floor): curl from the bench's server; bash's `time` prints
// curl's own CPU (user and system seconds) after curl's figures
const withTime = (c: string) => `TIMEFORMAT='%3U %3S'; { time ${c} ; } 2>&1`;
const curlBig = `curl -sS -o /dev/null -w '%{size_download} %{speed_download}\\n' http://web.test:${w.webPort}/big/100`;
const directCurl = `curl -sS -o /dev/null -w '%{size_download} %{speed_download}\\n' --noproxy '*' http://127.0.0.2:${w.webPort}/big/100`;
/** CPU per download (ms) by mode: curl's, the server's (this process), the relaying process's (all its
 * threads) and its relay thread's */
type Cpu = Record<string, { curl: number[]; server: number[]; daemon: number[]; relay_thread: number[]; kernel_threads: number[] }>;
/** MiB/s of one download from its output (withTime), its CPU recorded in cpu[k] */
function speed(cpu: Cpu, k: string, o: string, server: number, daemon: { all: number; relay: number }, kthreads?: number): number {
  const [line, times] = o.trim().split('\n');
  const [size, bps] = line.split(' ').map(Number);
  if (size !== 100 * 2 ** 20) throw new Error(`downloaded ${size} bytes, not 100 MiB: ${o}`);
  const [u, sy] = times.split(' ').map(Number);
  cpu[k] ??= { curl: [], server: [], daemon: [], relay_thread: [], kernel_threads: [] };
  if (kthreads !== undefined) cpu[k].kernel_threads.push(Math.round(kthreads));
  cpu[k].curl.push(Math.round((u + sy) * 1000));
  cpu[k].server.push(Math.round(server));
  cpu[k].daemon.push(Math.round(daemon.all));
  cpu[k].relay_thread.push(Math.round(daemon.relay));
  return r2(bps / 2 ** 20);
}
const cpuMedians = (cpu: Cpu) =>
  Object.fromEntries(
    Object.entries(cpu).map(([k, c]) => [
      k,
      {
        curl: median(c.curl),
        server: median(c.server),
        daemon: median(c.daemon),
        daemon_relay_thread: median(c.relay_thread),
        ...(c.kernel_threads.length ? { kernel_threads: median(c.kernel_threads) } : {}),
      },
    ]),
  );
/** each mode's MiB/s, best and median, and their ratios against direct's */
const speeds = (dl: Record<string, number[]> & { direct: number[] }) =>
  Object.fromEntries(
    Object.entries(dl).map(([k, xs]) => [
      k,
      { MiB_s: xs, best: best(xs), median: median(xs), ratio_best: r2(best(xs) / best(dl.direct)), ratio_median: r2(median(xs) / median(dl.direct)) },
    ]),
  );
/** ROUNDS rounds, each mode once per round, in a different order each round (no mode always runs first,
 * or after the same one); the 1-minute load average is noted at the start of each round */
async function inRounds<K extends string, F>(modes: [K, F][], loads: number[], each: (k: K, f: F) => Promise<void>): Promise<void> {
  for (let i = 0; i < ROUNDS; i++) {
    loads.push(load()[0]);
    const shift = i % modes.length;
    for (const [k, f] of [...modes.slice(shift), ...modes.slice(0, shift)]) await each(k, f);
  }
}

const out: Record<string, unknown> = {};
try {
  if (PARTS.has('setup')) {
    const before = load();
    const js = join(dir, 'setup.js');
    writeFileSync(js, setupJs(false));
    const jsDirect = join(dir, 'setup-direct.js');
    writeFileSync(jsDirect, setupJs(true));
    const proxied: number[] = JSON.parse(await viaGate(`node ${js}`));
    const direct: number[] = JSON.parse(await onHost(process.execPath, [jsDirect]));
    out.setup_ms = {
      proxy_p50: r2(pct(proxied, 0.5)),
      proxy_p99: r2(pct(proxied, 0.99)),
      direct_p50: r2(pct(direct, 0.5)),
      direct_p99: r2(pct(direct, 0.99)),
      connections: SETUPS,
      load_average_before: before,
      load_average_after: load(),
      what: 'a fresh TCP connection and one small GET, to the whole answer; proxy: from inside the sandbox through bridge and proxy',
    };
  }

  if (PARTS.has('download')) {
    const before = load();
    const cpu: Cpu = {};
    const dl = {
      direct: [] as number[],
      plain_http: [] as number[],
      plain_http_via_bridge: [] as number[],
      connect_tunnel: [] as number[],
      connect_tunnel_via_bridge: [] as number[],
      connect_tunnel_in_node: [] as number[],
      connect_tunnel_splice: [] as number[],
    };
    const loads: number[] = [];
    const modes: [keyof typeof dl, () => Promise<string>][] = [
      ['direct', () => onHost('bash', ['-c', withTime(directCurl)])],
      ['plain_http', () => viaGate(withTime(curlBig))],
      ['plain_http_via_bridge', () => viaGate(withTime(curlBig), dBridge)],
      // the same through a CONNECT tunnel (curl --proxytunnel): the path https takes
      ['connect_tunnel', () => viaGate(withTime(`${curlBig} -p`))],
      ['connect_tunnel_via_bridge', () => viaGate(withTime(`${curlBig} -p`), dBridge)],
      ['connect_tunnel_in_node', () => viaGate(withTime(`${curlBig} -p`), dNode)],
      ['connect_tunnel_splice', () => viaGate(withTime(`${curlBig} -p`), dSplice)],
    ];
    // whose daemon each mode goes through (direct: none, its daemon's CPU is the idle baseline)
    const through: Record<string, number> = {
      direct: pid,
      plain_http: pid,
      plain_http_via_bridge: dBridge.child.pid!,
      connect_tunnel: pid,
      connect_tunnel_via_bridge: dBridge.child.pid!,
      connect_tunnel_in_node: dNode.child.pid!,
      connect_tunnel_splice: dSplice.child.pid!,
    };
    await inRounds(modes, loads, async (k, f) => {
      const s0 = process.cpuUsage();
      const d0 = runNs(through[k]);
      const o = await f();
      const s1 = process.cpuUsage(s0);
      const d1 = runNs(through[k]);
      dl[k].push(speed(cpu, k, o, (s1.user + s1.system) / 1000, { all: (d1.all - d0.all) / 1e6, relay: (d1.relay - d0.relay) / 1e6 }));
    });
    out.download_100MiB = {
      ...speeds(dl),
      // CPU per download, ms (median of the rounds): curl's own; this process's (the server, and the
      // spawning of each client); the daemon's, all its threads (the run's set-up, the proxy, the relay
      // thread), and its relay thread alone. Not counted:
      // the bridge (its own process in the sandbox, where it relays), gate-sh and bwrap, the kernel's
      // softirq work done on another party's time (loopback delivers in the sender's context)
      cpu_ms_per_download: cpuMedians(cpu),
      // per round: the tunnel against direct in that same round (the load moves between rounds)
      plain_http_ratio_per_round: dl.plain_http.map((x, i) => r2(x / dl.direct[i])),
      connect_tunnel_ratio_per_round: dl.connect_tunnel.map((x, i) => r2(x / dl.direct[i])),
      connect_tunnel_splice_ratio_per_round: dl.connect_tunnel_splice.map((x, i) => r2(x / dl.direct[i])),
      connect_tunnel_via_bridge_ratio_per_round: dl.connect_tunnel_via_bridge.map((x, i) => r2(x / dl.direct[i])),
      load_average_1m_per_round: loads,
      rounds: ROUNDS,
      load_average_before: before,
      load_average_after: load(),
      what: 'curl, MiB/s, each mode once per round; ratios against direct; plain_http: each request read and decided by the proxy, the body of the answer carried by the native relay (the client on the handed-over listener); plain_http_via_bridge: the same with the bridge relaying (GATE_NET_HANDOFF=off); connect_tunnel: CONNECT, the client connected to the proxy on the listener its bridge handed over, the bytes carried by the native relay; connect_tunnel_via_bridge: the same with the bridge relaying (GATE_NET_HANDOFF=off: bridge and relay splice through pipes); connect_tunnel_in_node: the tunnel piped in Node (GATE_NET_RELAY=node), the client on the handed-over listener; connect_tunnel_splice: connect_tunnel with the relay splicing bulk halves too (GATE_RELAY_COPY=off)',
    };
  }

  if (PARTS.has('floor')) {
    const before = load();
    // programs/relay-floor.c, one process per configuration, each listening on 127.0.0.5 and relaying to
    // the bench's server: the fastest a plain relay of our own carries the same download here
    const program = join(dir, 'relay-floor');
    execFileSync('gcc', ['-static', '-O2', '-pthread', '-o', program, join(ROOT, 'test', 'bench', 'programs', 'relay-floor.c')]);
    const relays: { name: string; child: ReturnType<typeof spawn>; port: number; lines: string[]; wake: (() => void) | null }[] = [];
    try {
      for (const conf of FLOOR_MODES) {
        const child = spawn(program, ['127.0.0.5:0', `127.0.0.2:${w.webPort}`, ...conf.split(' ')], { stdio: ['ignore', 'pipe', 'inherit'] });
        const r = { name: `relay_floor ${conf}`, child, port: 0, lines: [] as string[], wake: null as (() => void) | null };
        let acc = '';
        child.stdout!.on('data', (b) => {
          const ls = (acc + b).split('\n');
          acc = ls.pop()!;
          r.lines.push(...ls);
          r.wake?.();
        });
        // its first line is the port it listens on
        while (r.lines.length === 0) {
          if (child.exitCode !== null) throw new Error(`relay-floor ${conf}: exit ${child.exitCode}`);
          await new Promise<void>((res) => {
            r.wake = res;
            child.once('exit', () => res());
          });
        }
        r.port = Number(r.lines.shift());
        relays.push(r);
      }
      /** the relay's line for the connection just relayed: bytes up, down, down from mapped pages, CPU µs */
      const relayLine = async (r: (typeof relays)[number]) => {
        const t0 = Date.now();
        while (r.lines.length === 0 && Date.now() - t0 < 10_000) await new Promise<void>((res) => ((r.wake = res), setTimeout(res, 100)));
        const f = (r.lines.shift() ?? '').split(' ').map(Number);
        if (f.length !== 5) throw new Error(`${r.name}: no line for the download`);
        return { down: f[1], mapped: f[2], cpuMs: (f[3] + f[4]) / 1000 };
      };
      const cpu: Cpu = {};
      const dl: Record<string, number[]> & { direct: number[] } = { direct: [], connect_tunnel: [] };
      const mapped: Record<string, number[]> = {};
      type Mode = () => Promise<{ o: string; relay: () => Promise<{ all: number; relay: number }> }>;
      const daemonRelay = (): Mode => async () => {
        const d0 = runNs(pid);
        const o = await viaGate(withTime(`${curlBig} -p`));
        const d1 = runNs(pid);
        return { o, relay: async () => ({ all: (d1.all - d0.all) / 1e6, relay: (d1.relay - d0.relay) / 1e6 }) };
      };
      const modes: [string, Mode][] = [
        ['direct', async () => ({ o: await onHost('bash', ['-c', withTime(directCurl)]), relay: async () => ({ all: 0, relay: 0 }) })],
        ['connect_tunnel', daemonRelay()],
        ...relays.map((r): [string, Mode] => {
          dl[r.name] = [];
          mapped[r.name] = [];
          const floorCurl = `curl -sS -o /dev/null -w '%{size_download} %{speed_download}\\n' --noproxy '*' http://127.0.0.5:${r.port}/big/100`;
          return [
            r.name,
            async () => {
              const o = await onHost('bash', ['-c', withTime(floorCurl)]);
              return {
                o,
                relay: async () => {
                  const l = await relayLine(r);
                  mapped[r.name].push(r2(l.mapped / Math.max(1, l.down)));
                  return { all: l.cpuMs, relay: l.cpuMs };
                },
              };
            },
          ];
        }),
      ];
      // what curl costs before any byte (its start, the connection, a tiny answer): the rest of its CPU
      // is the download's
      const start: number[] = [];
      for (let i = 0; i < 5; i++) {
        const [u, sy] = (await onHost('bash', ['-c', withTime(`curl -sS -o /dev/null --noproxy '*' http://127.0.0.2:${w.webPort}/hello`)]))
          .trim()
          .split(' ')
          .map(Number);
        start.push(Math.round((u + sy) * 1000));
      }
      const loads: number[] = [];
      await inRounds(modes, loads, async (k, f) => {
        const k0 = kthreadNs();
        const s0 = process.cpuUsage();
        const { o, relay } = await f();
        const s1 = process.cpuUsage(s0);
        const k1 = kthreadNs();
        dl[k].push(speed(cpu, k, o, (s1.user + s1.system) / 1000, await relay(), (k1 - k0) / 1e6));
      });
      out.floor_100MiB = {
        ...speeds(dl),
        // ms per download (median): curl; server (this process); daemon / daemon_relay_thread: gate's
        // daemon and its relay thread (connect_tunnel), relay-floor's whole process (relay_floor …);
        // kernel_threads: every kworker and ksoftirqd on the machine over the download (a sockmap relay's
        // sending is there; so is any other process's kernel work meanwhile, the bench's own /proc reads
        // and, for connect_tunnel, the whole gate-sh run's)
        cpu_ms_per_download: cpuMedians(cpu),
        curl_cpu_ms_for_a_tiny_answer: median(start),
        // zc: the share of the bytes down that were sent from pages mapped by TCP_ZEROCOPY_RECEIVE
        zc_share_sent_from_mapped_pages: Object.fromEntries(Object.entries(mapped).filter(([k]) => k.startsWith('relay_floor zc'))),
        load_average_1m_per_round: loads,
        rounds: ROUNDS,
        load_average_before: before,
        load_average_after: load(),
        what: 'the download part\'s 100 MiB by curl, each mode once per round: direct; connect_tunnel: through gate-sh\'s CONNECT tunnel as in the download part; relay_floor <mode> <options>: through test/bench/programs/relay-floor.c on 127.0.0.5 (a bare TCP relay of our own, no proxy protocol, no sandbox), curl on the host',
      };
    } finally {
      for (const r of relays) r.child.kill();
    }
  }

  if (PARTS.has('held')) {
    const before = load();
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
    out.held_200 = {
      connections: CONNECTIONS,
      all_open_after_ms: setupMs,
      daemon_cpu_ms_to_open_all: r2(cpuSetup),
      daemon_cpu_ms_per_s_while_held: r2(cpuIdleHeld / 2),
      daemon_rss_MiB_before: rssBefore,
      daemon_rss_MiB_held: rssHeld,
      load_average_before: before,
      load_average_after: load(),
    };
  }

  if (PARTS.has('per_command')) {
    // a daemon with the network off, whose runs join the session sandbox (the default) unless told not to
    const dOff = await startDaemon({ workspace: 'ws', env: { GATE_SANDBOX_MODE: 'workspace-write' } });
    try {
      const variants: Record<string, () => Promise<number>> = {
        'rules: own sandbox, bridge and proxy': () => oneCommand(d.env, d.ws),
        'rules, the bridge relaying (GATE_NET_HANDOFF=off)': () => oneCommand(dBridge.env, dBridge.ws),
        'off: session sandbox (joined)': () => oneCommand(dOff.env, dOff.ws),
        'off: own sandbox (GATE_SESSION_SANDBOX=off)': () => oneCommand({ ...dOff.env, GATE_SESSION_SANDBOX: 'off' }, dOff.ws),
        'unshare -rn true (a network namespace)': () => timed('unshare', ['-rn', 'true']),
        'unshare -r true (none)': () => timed('unshare', ['-r', 'true']),
      };
      for (const v of Object.values(variants)) for (let i = 0; i < 3; i++) await v();
      const before = load();
      const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
      const names = Object.keys(variants);
      for (let round = 0; round < COMMAND_ROUNDS; round++) {
        const shift = round % names.length;
        for (const n of [...names.slice(shift), ...names.slice(0, shift)]) times[n].push(await variants[n]());
      }
      const p50 = (n: string) => pct(times[n], 0.5);
      out.per_command_ms = {
        ...Object.fromEntries(Object.entries(times).map(([k, xs]) => [k, { p50: r2(pct(xs, 0.5)), p90: r2(pct(xs, 0.9)) }])),
        'own sandbox - joined (off), p50': r2(p50('off: own sandbox (GATE_SESSION_SANDBOX=off)') - p50('off: session sandbox (joined)')),
        'rules - off own sandbox (bridge, proxy), p50': r2(p50('rules: own sandbox, bridge and proxy') - p50('off: own sandbox (GATE_SESSION_SANDBOX=off)')),
        'network namespace, p50': r2(p50('unshare -rn true (a network namespace)') - p50('unshare -r true (none)')),
        rounds: COMMAND_ROUNDS,
        load_average_before: before,
        load_average_after: load(),
        what: 'gate-sh -c true from spawn to exit, variants alternating in each round',
      };
    } finally {
      await dOff.close();
    }
  }
  out.reruns_after_mask_flake = flakes;
  console.log(JSON.stringify(out));
} finally {
  await d.close();
  await dNode.close();
  await dSplice.close();
  await dBridge.close();
  await w.close();
  killAll();
  rmSync(dir, { recursive: true, force: true });
}
