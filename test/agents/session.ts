/**
 * Issue 31's realistic session, defined once for every agent × version × route: 15 shell calls a coding
 * agent makes on a small Python project (read, search, write a file by heredoc, run it, edit in place, diff,
 * commit, serve and fetch on loopback, node and npm, a pipe with $(...), and an rm the user's rule forbids),
 * the workspace it starts from, how each agent's tool result reads as (output, exit status), and the
 * normalisation the comparison allows (commit ids, dates, pids). Test code only, pure but for
 * prepareSession (writes the scratch workspace) and stopServer.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { ToolResult } from './fake-model.js';
import type { PinnedAgent } from './install.js';

/** A user's variables: one the session prints (issue 31 point 5: Codex over MCP lost the user's
 * environment), and an EDITOR, as most users have. */
export const USER_ENV = { VIRTUAL_ENV: '/opt/venvs/greeter', EDITOR: 'vi' };

/** The 15 calls; `port` is a free loopback port for the background server. */
export function sessionCommands(port: number): string[] {
  return [
    'git status',
    'ls -la',
    'cat app.py',
    'grep -rn "def " --exclude-dir=.git .',
    "sed -n '1,2p' app.py",
    "cat > test_app.py <<'EOF'\nfrom app import greet\n\nprint(greet(\"gate\"))\nEOF\necho written test_app.py",
    'python3 test_app.py',
    "sed -i 's/Hello/Goodbye/' app.py && cat app.py",
    'git diff',
    'git add -A && git commit -m "Say goodbye, with a test"',
    `python3 -m http.server ${port} --bind 127.0.0.1 >/dev/null 2>&1 &\necho $! > .server.pid; echo "serving on ${port} as $!"`,
    // waits for the server as a model would (python3 starts slowly through a pyenv shim), then stops it
    `for i in $(seq 100); do curl -fs http://127.0.0.1:${port}/app.py && break; sleep 0.2; done; kill "$(cat .server.pid)" && echo stopped`,
    "node -e 'console.log([1, 2, 3].map((x) => x * 2).join(\",\"))' && npm --version",
    'echo "tracked: $(git ls-files | wc -l), venv: ${VIRTUAL_ENV:-UNSET}" | tr a-z A-Z',
    'rm -rf somefile',
  ];
}

/** Index of the rm call (the one call gate-sh must refuse). */
export const RM_CALL = 14;

export const APP_PY = 'def greet(name):\n    return f"Hello, {name}!"\n\n\nif __name__ == "__main__":\n    print(greet("world"))\n';

/** The project the session works on: a committed app.py and somefile, a git identity in HOME. */
export function prepareSession(home: string, work: string, env: Record<string, string>): void {
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Dev Eloper\n\temail = dev@example.invalid\n[init]\n\tdefaultBranch = main\n');
  writeFileSync(join(work, 'app.py'), APP_PY);
  const git = (...a: string[]) => {
    const r = spawnSync('git', a, { cwd: work, env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${a.join(' ')}: ${r.stderr}`);
  };
  git('checkout', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'Greeter');
}

/** A loopback port free right now (the session's server binds it a few calls later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

/** Stops the session's server if it outlived the session (its pid file, if that pid is that server). */
export function stopServer(work: string, port: number): void {
  try {
    const pid = Number(readFileSync(join(work, '.server.pid'), 'utf8').trim());
    if (pid > 1 && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`http.server\0${port}`)) process.kill(pid, 'SIGTERM');
  } catch {
    // gone already, or never started on the host's pid namespace
  }
}

/** One call as the model saw it: the output text and the exit status (undefined where the agent does not say). */
export interface CallResult {
  output: string;
  exit: number | undefined;
}

/**
 * How each agent renders a shell tool result, read back as (output, exit status). `mcp`: Codex's rendering
 * of gate-sh's MCP tool (its JSON), else the agent's built-in shell tool.
 */
export function callResult(agent: PinnedAgent, r: ToolResult, mcp = false): CallResult {
  if (agent === 'claude-code') {
    // Claude Code: stdout and stderr, trimmed; a failure is is_error, its text led by "Exit code N"
    const m = /^Exit code (\d+)\n?/.exec(r.output);
    if (r.isError && m) return { output: r.output.slice(m[0].length), exit: Number(m[1]) };
    return { output: r.output, exit: r.isError ? undefined : 0 };
  }
  if (agent === 'gemini') {
    // gemini-cli: "Output: ...\nExit Code: N\nProcess Group PGID: N" (Exit Code only when not 0), maybe
    // wrapped in an <untrusted_context> block
    const text = r.output.replace(/\nProcess Group PGID: \d+/, '');
    const code = /\nExit Code: (\d+)/.exec(text);
    const out = /Output: ([\s\S]*?)(?:\n<\/untrusted_context>|\nExit Code: \d+|\nError: |$)/.exec(text);
    return { output: out ? out[1] : text, exit: code ? Number(code[1]) : 0 };
  }
  if (mcp) {
    const i = r.output.indexOf('Output:');
    if (i >= 0) {
      const j = JSON.parse(r.output.slice(i + 'Output:'.length));
      return { output: j.output, exit: j.exit_code };
    }
    return { output: r.output, exit: undefined };
  }
  // Codex's built-in exec_command: "Chunk ID: ..\nWall time: ..\nProcess exited with code N\n...Output:\n..."
  // ("Process running with session ID N" when the command outlived its wait); a refusal is plain text
  const m = /^(?:[A-Z][^\n]*\n)*?(?:Process exited with code (\d+)|Process running with session ID \d+)\n(?:[A-Z][^\n]*\n)*?Output:\n([\s\S]*)$/.exec(r.output);
  return m ? { output: m[2], exit: m[1] === undefined ? undefined : Number(m[1]) } : { output: r.output, exit: undefined };
}

/** What may differ between two runs of the same call: commit ids, dates and times, pids (issue 31), and the
 * loopback port each run chose for its server. */
export function normalise(s: string, port: number): string {
  return s
    .trim()
    .replaceAll(String(port), '<port>')
    .replace(/\b[0-9a-f]{7,40}\b/g, '<id>')
    .replace(/\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} +(?:\d{2}:\d{2}|\d{4})\b/g, '<date>')
    .replace(/\b(as|PIDs?:) \d+\b/g, '$1 <pid>');
}
