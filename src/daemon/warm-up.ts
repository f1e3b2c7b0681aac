/**
 * Warming the daemon's parsers with throw-away scripts before real clients come: the sample scripts and the
 * idle-time schedule. Decides nothing that is kept (only the decider's cache sees the samples); timers are
 * unref'd, so warming never keeps a stopping daemon alive.
 */
import { type PreflightRequest, PROTOCOL_VERSION } from '../protocol/index.js';

/** The i-th warm-up pre-flight: the shapes real scripts have (lists, pipes, redirections, substitutions,
 * quoting, loops, nested shells), each made unique by i. */
export function warmUpRequest(i: number): PreflightRequest {
  const shapes = [
    `cd /tmp && ls -la | grep x${i}; echo "$(date)" > /dev/null`,
    `git status && git diff --stat HEAD~${i} | tail -n 3`,
    `npm test -- --grep 'case ${i}' 2>&1 | tee /tmp/out${i}.log`,
    `for f in *.ts; do wc -l "$f"; done > /dev/null; echo ${i}`,
    `x=${i}; if [ "$x" -gt 1 ]; then echo "big \${x}"; else printf '%s\\n' small; fi`,
    `bash -c 'echo nested ${i}' && cat <<'EOF'\nbody ${i}\nEOF`,
    `find . -name '*.md' -newer a${i} -exec head -1 {} \\; | sort -u | head`,
    `python3 -c "print(${i})" || make -j2 build-${i} && sed -i 's/a/b/' f${i}.txt`,
  ];
  return {
    v: PROTOCOL_VERSION,
    id: `warm-up-${i}`,
    type: 'preflight',
    shell: 'bash',
    flag: i % 2 ? '-lc' : '-c',
    script: shapes[i % shapes.length],
    cwd: '/',
    pid: process.pid,
    sandbox_permissions: 'use_default',
  };
}

export interface WarmUpOptions {
  scripts?: number;
  afterMs?: number;
  idleMs?: number;
}

export interface WarmUpHooks {
  /** decide one sample (throws nothing the caller must handle: a failure is logged) */
  decide(req: PreflightRequest): void;
  /** when the last client request came (ms since the epoch) */
  lastRequestAt(): number;
  log(line: string): void;
  /** samples decided so far, of how many (ping's info shows it) */
  state: { done: number; of: number };
}

/**
 * Decide throw-away scripts so the parsers are loaded and compiled before real clients: one now, then
 * more up to `scripts`, one per timer turn, once the daemon is `afterMs` old and only while no client has
 * asked anything for `idleMs`. A script the daemon has not seen costs ~10 ms with cold parsers, ~6 ms
 * after 150 and ~2.5 ms after 400 (measured); each must be new (a repeat is a decider-cache hit and
 * compiles nothing). About a second of idle CPU, once, for a daemon that lives long enough to gain from
 * it (a short-lived one, as in tests, never pays).
 */
export function warmUp({ scripts = 400, afterMs = 10_000, idleMs = 100 }: WarmUpOptions, h: WarmUpHooks): void {
  h.state.of = scripts;
  const decide = (i: number): void => {
    try {
      h.decide(warmUpRequest(i));
    } catch (e) {
      h.log(`warm-up script ${i}: ${(e as Error).message}`); // a cold parser is slow, not wrong
    }
  };
  let next = 0;
  // one now (loads and compiles the parsers for the first client); each further cold one would add ~40 ms
  // to the daemon's start, which an autostarting gate-sh waits for
  if (scripts > 0) decide(next++);
  h.state.done = next;
  // a step blocks for a few ms, so it waits while clients are being answered
  const step = (): void => {
    if (next >= scripts) return;
    const busy = Date.now() - h.lastRequestAt() < idleMs;
    if (!busy) {
      decide(next++);
      h.state.done = next;
    }
    setTimeout(step, busy ? idleMs : 0).unref(); // never what keeps a stopping daemon alive
  };
  setTimeout(step, afterMs).unref();
}
