/**
 * More of a coding agent's everyday work for the realwork suite (issue 29), beside projects.ts: toolchains
 * (cmake + ctest, make -j2 with a static library, cargo offline, javac), a Python package installed in
 * editable mode with its test runners and process pools, npm scripts and local bins, git beyond commits
 * (rebase, am, cherry-pick, worktree, bisect, submodule, the repository's own hooks), the shell idioms agents
 * use, and variables set for one command (`PYTHONPATH=src pytest`). Each is written afresh and run under
 * gate-sh and plain bash; a toolchain not on the machine is `missing` (the test skips it, saying which).
 * Test-only: the tools are the machine's (Debian's cmake, openjdk, python3; rustup's cargo).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import type { Project } from './projects.js';

export interface Workflow extends Project {
  /** why it cannot run on this machine (a tool not installed), or undefined */
  missing?: string;
}

function files(dir: string, tree: Record<string, string>): void {
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text, { mode: path.endsWith('.sh') || text.startsWith('#!') ? 0o755 : 0o644 });
  }
}

/** A program on the test runner's PATH (or in `extra` folders): its path, or undefined. */
function which(name: string, extra: string[] = []): string | undefined {
  for (const d of [...(process.env.PATH ?? '').split(delimiter), ...extra]) if (d && existsSync(join(d, name))) return join(d, name);
  return undefined;
}

/** The same identity and dates on both sides: commits hash alike. */
const GIT_ID =
  'export GIT_AUTHOR_NAME=A GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=A GIT_COMMITTER_EMAIL=a@example.com ' +
  'GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z\n';

/** A C library and program built with cmake (make, two jobs), tested with ctest, rebuilt with ninja if present. */
export const CMAKE: Workflow = {
  name: 'cmake -B build && cmake --build build -j2 && ctest',
  missing: which('cmake') && which('ctest') ? undefined : 'cmake is not installed',
  write: (dir) =>
    files(dir, {
      'CMakeLists.txt': [
        'cmake_minimum_required(VERSION 3.10)',
        'project(demo C)',
        'enable_testing()',
        'add_library(mathx STATIC mathx.c)',
        'add_executable(app main.c)',
        'target_link_libraries(app mathx)',
        'add_test(NAME runs COMMAND app)',
        'add_test(NAME prints COMMAND sh -c "./app | grep -q 5")',
        '',
      ].join('\n'),
      'mathx.c': 'int add(int a, int b) { return a + b; }\n',
      'mathx.h': 'int add(int a, int b);\n',
      'main.c': '#include <stdio.h>\n#include "mathx.h"\nint main(void) { printf("%d\\n", add(2, 3)); return 0; }\n',
    }),
  script:
    'cmake -S . -B build >/dev/null && cmake --build build -j2 >/dev/null && (cd build && ctest 2>&1 | grep -E "tests passed") && ./build/app && ' +
    'cmake --install build --prefix "$PWD/inst" >/dev/null; ls build/libmathx.a && cmake --build build --target clean && ls build/app 2>&1 | sed "s/.*: //"',
};

/** A Makefile that builds a static library with ar and links it, with two jobs; `make -C sub`; clean and rebuild. */
export const MAKE_AR: Workflow = {
  name: 'make -j2 with ar, nm, make -C, make clean',
  write: (dir) =>
    files(dir, {
      Makefile: [
        'all: app',
        'libm2.a: x.o y.o',
        '\t$(AR) rcs $@ $^',
        'app: main.o libm2.a',
        '\t$(CC) -o $@ main.o -L. -lm2',
        '%.o: %.c',
        '\t$(CC) -c $< -o $@',
        'test: app',
        '\t./app',
        'clean:',
        '\trm -f *.o *.a app',
        '\t$(MAKE) -C sub clean',
        '.PHONY: all test clean',
        '',
      ].join('\n'),
      'x.c': 'int x(void) { return 1; }\n',
      'y.c': 'int y(void) { return 2; }\n',
      'main.c': '#include <stdio.h>\nint x(void);\nint y(void);\nint main(void) { printf("%d\\n", x() + y()); return 0; }\n',
      'sub/Makefile': 'out.txt:\n\techo sub > out.txt\nclean:\n\trm -f out.txt\n',
    }),
  script: 'make -j2 -s && make -s test && ar t libm2.a && nm libm2.a | grep -c " T " && make -s -C sub && cat sub/out.txt && make -s clean && ls . sub && make -j2 -s all && ./app',
};

/** rustup's cargo and rustc: the test runner's, or ~/.cargo/bin (a rustup proxy reads RUSTUP_HOME). */
function cargoSetup(): { line: string; missing?: string } {
  const cargo = which('cargo', [join(homedir(), '.cargo', 'bin')]);
  if (!cargo) return { line: '', missing: 'cargo is not installed' };
  const rustup = process.env.RUSTUP_HOME ?? join(homedir(), '.rustup');
  const home = existsSync(rustup) ? ` RUSTUP_HOME=${rustup}` : '';
  return { line: `export PATH=${dirname(cargo)}:$PATH${home} CARGO_HOME="$PWD/.cargo-home"\n` };
}
const CARGO_SETUP = cargoSetup();

/** A crate with no dependencies, a build script, a unit test and an integration test that runs the binary. */
export const CARGO: Workflow = {
  name: 'cargo build, test, run --offline (no dependencies)',
  missing: CARGO_SETUP.missing,
  write: (dir) =>
    files(dir, {
      'Cargo.toml': '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
      'build.rs': 'fn main() { println!("cargo:rerun-if-changed=build.rs"); }\n',
      'src/lib.rs': 'pub fn add(a: i32, b: i32) -> i32 { a + b }\n#[cfg(test)]\nmod tests { #[test] fn adds() { assert_eq!(super::add(2, 3), 5); } }\n',
      'src/main.rs': 'fn main() { println!("{}", demo::add(2, 3)); }\n',
      'tests/cli.rs':
        '#[test]\nfn prints() {\n    let o = std::process::Command::new(env!("CARGO_BIN_EXE_demo")).output().unwrap();\n    assert_eq!(o.stdout, b"5\\n");\n}\n',
    }),
  script: `${CARGO_SETUP.line}cargo build --offline -q && cargo test --offline -q 2>&1 | grep -E "^test result" | sed "s/finished in .*//" && cargo run --offline -q && cargo clean -q && ls`,
};

/** Two Java classes compiled and run; the program starts a child process. */
export const JAVA: Workflow = {
  name: 'javac -d out && java -cp out (a child process)',
  missing: which('javac') && which('java') ? undefined : 'javac is not installed',
  write: (dir) =>
    files(dir, {
      'src/app/Main.java':
        'package app;\npublic class Main {\n  public static void main(String[] a) throws Exception {\n    System.out.println(Util.greet("x"));\n' +
        '    Process p = new ProcessBuilder("sh", "-c", "echo child; ls out/app").inheritIO().start();\n    System.exit(p.waitFor());\n  }\n}\n',
      'src/app/Util.java': 'package app;\npublic class Util { static String greet(String s) { return "hello " + s; } }\n',
    }),
  script: 'javac -d out src/app/*.java && java -cp out app.Main',
};

/**
 * A Python package in src/ layout installed in editable mode into a virtualenv (the system's setuptools and
 * pip, no network), its console script, pytest, unittest, and process pools of every start method.
 */
export const PYTHON_PACKAGE: Workflow = {
  name: 'pip install -e . into a venv, console script, pytest -x, unittest, multiprocessing',
  write: (dir) =>
    files(dir, {
      'pyproject.toml':
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "demo"\nversion = "0.1"\n\n' +
        '[project.scripts]\ndemo-cli = "demo:main"\n',
      'src/demo/__init__.py': 'def square(x):\n    return x * x\n\ndef main():\n    print("cli", square(3))\n',
      'tests/test_demo.py':
        'import subprocess, sys\nimport demo\n\ndef test_square():\n    assert demo.square(4) == 16\n\n' +
        'def test_cli():\n    assert subprocess.run(["demo-cli"], capture_output=True, text=True).stdout == "cli 9\\n"\n',
      'tests/test_unit.py':
        'import unittest, subprocess, sys\n\nclass T(unittest.TestCase):\n    def test_child(self):\n' +
        '        self.assertEqual(subprocess.check_output([sys.executable, "-c", "print(1)"]), b"1\\n")\n\n' +
        '    def test_shell(self):\n        self.assertEqual(subprocess.check_output("echo hi | tr a-z A-Z", shell=True), b"HI\\n")\n',
      'pools.py':
        'import multiprocessing as mp, concurrent.futures as cf, os\nfrom demo import square\n\nif __name__ == "__main__":\n' +
        '    for m in ("fork", "spawn", "forkserver"):\n        with mp.get_context(m).Pool(2) as p:\n            print(m, p.map(square, range(4)))\n' +
        '    with cf.ProcessPoolExecutor(2) as ex:\n        print(list(ex.map(square, [5, 6])))\n    print(os.popen("echo popen").read().strip())\n',
    }),
  script:
    'python3 -m venv --without-pip --system-site-packages .venv && . .venv/bin/activate && ' +
    'python -m pip install -q --no-deps --no-build-isolation --disable-pip-version-check -e . 2>&1 | grep -iv -e notice -e warning; ' +
    'demo-cli && python -m pytest -x -q -p no:cacheprovider tests 2>&1 | tail -1 | sed "s/ in .*//" && ' +
    'python -m unittest discover -s tests -p "test_unit.py" 2>&1 | tail -1 && python pools.py && python -m pip show demo 2>/dev/null | head -2',
};

const PKG = (o: object) => JSON.stringify({ name: 'proj', version: '1.0.0', private: true, ...o }, null, 2);
const NPMRC = 'audit=false\nfund=false\nupdate-notifier=false\noffline=true\n';

/** npm scripts with pre/post hooks and a failing one, a local bin through npx and npm exec, node --test whose tests start processes. */
export const NODE_TOOLS: Workflow = {
  name: 'npm run with pre/post scripts, npx of a local bin, node --test with child processes',
  write: (dir) =>
    files(dir, {
      '.npmrc': NPMRC,
      'package.json': PKG({
        scripts: {
          prebuild: 'echo pre && mkdir -p dist',
          build: 'node -e "require(\'fs\').writeFileSync(\'dist/o\', \'x\')" && echo build',
          postbuild: 'echo post && ls dist && rm -rf dist',
          lint: 'exit 3',
          test: 'node --test --test-reporter=tap test/ | grep -E "^(ok|not ok|# (pass|fail))"',
        },
      }),
      'node_modules/tool/package.json': JSON.stringify({ name: 'tool', version: '1.0.0', bin: { tool: 'cli.js' } }),
      'node_modules/tool/cli.js': '#!/usr/bin/env node\nconsole.log("tool", process.argv.slice(2).join(","));\n',
      'test/proc.test.mjs': [
        'import test from "node:test";',
        'import assert from "node:assert";',
        'import { execSync, spawn, execFile } from "node:child_process";',
        'test("execSync", () => assert.equal(execSync("echo hi").toString(), "hi\\n"));',
        'test("spawn sh", async () => {',
        '  const c = spawn("sh", ["-c", "echo $((1 + 2))"]);',
        '  let o = "";',
        '  c.stdout.on("data", (d) => (o += d));',
        '  await new Promise((r) => c.on("close", r));',
        '  assert.equal(o, "3\\n");',
        '});',
        'test("execFile node", async () => {',
        '  const o = await new Promise((r, j) => execFile("node", ["-p", "6 * 7"], (e, s) => (e ? j(e) : r(s))));',
        '  assert.equal(o, "42\\n");',
        '});',
        '',
      ].join('\n'),
    }),
  // (gate mcp's calls get its host's environment, here the test runner's, whose NODE_TEST_CONTEXT would make
  // the project's node --test skip its files: src/integrations/mcp-env.ts)
  script:
    'unset NODE_TEST_CONTEXT; export npm_config_cache="$PWD/.npm-cache"; mkdir -p node_modules/.bin && ln -s ../tool/cli.js node_modules/.bin/tool && ' +
    'npm run -s build && npm run lint 2>/dev/null; echo "lint: $?"; npx tool a b && npm exec -- tool c && npm test 2>&1 | grep -v "^$"',
};

/** git beyond add and commit, in a repository the agent makes: history edits, patches, worktrees, bisect, a submodule, its own hooks. */
export const GIT_MORE: Workflow = {
  name: 'git rebase -i/--exec, am, cherry-pick, worktree, bisect run, submodule, gc, tag, blame, own hooks',
  write: () => undefined,
  script:
    GIT_ID +
    [
      'git init -q -b main lib && git -C lib commit -q --allow-empty -m lib',
      'git init -q -b main repo && cd repo',
      'for i in 1 2 3 4; do echo $i >> a; git add a; git commit -q -m c$i; done',
      'GIT_SEQUENCE_EDITOR=true git rebase -q -i HEAD~2 && git rebase -q --exec "test -f a" HEAD~2 && git log --format=%s | head -2',
      'git format-patch -q -1 -o ../p && git reset -q --hard HEAD~1 && git am -q ../p/*.patch && git log -1 --format=%s',
      'git checkout -q -b side HEAD~2 && echo s > s && git add s && git commit -q -m side && git checkout -q main',
      'git cherry-pick side >/dev/null && git revert --no-edit HEAD >/dev/null && git log --format=%s | head -2',
      'git worktree add -q ../wt -b wt && git -C ../wt log -1 --format=%s && git worktree remove ../wt && git branch | sort | tr -d " *"',
      'git bisect start HEAD HEAD~5 >/dev/null && git bisect run sh -c "! grep -q 3 a" 2>&1 | grep -c "is the first bad commit"; git bisect reset >/dev/null 2>&1',
      'git -c protocol.file.allow=always submodule add -q ../lib lib 2>&1 && git commit -q -m sub && git submodule status | cut -c42-',
      'git tag -a v1 -m "release 1" && git describe && git gc -q && git count-objects -v | grep -c "^packs: 1"',
      'git blame -s a | cut -c10- && git log --graph --oneline --all | sed "s/[0-9a-f]\\{7\\}/H/" | head -3',
      'printf "#!/bin/sh\\necho pre-commit ran >&2\\ntest ! -f block\\n" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit',
      'echo 5 >> a && git commit -q -am c5 && touch block && echo 6 >> a && { git commit -q -am c6; echo "blocked: $?"; }',
      'rm block && mkdir .husky && printf "#!/bin/sh\\necho husky ran >&2\\n" > .husky/pre-commit && chmod +x .husky/pre-commit',
      'git config core.hooksPath .husky && git commit -q -am c6 && git log -1 --format=%s && git status --short',
    ].join(' &&\n'),
};

/** The shell idioms agents use, in one script. */
export const SHELL_IDIOMS: Workflow = {
  name: 'shell idioms: jobs and wait, timeout, xargs -P, find -exec +, sed -i, tee, <(...), nohup, trap, pipefail, pushd, mktemp, taskset',
  write: (dir) =>
    files(dir, {
      'src/a.txt': 'hello world\n',
      'src/b.txt': 'foo\n',
      'src/c.md': 'md\n',
      'strict.sh': '#!/usr/bin/env bash\nset -euo pipefail\nx=$(echo hi)\necho "$x"\nfalse | true\necho after\ncat missing-file | wc -l\necho not reached\n',
    }),
  script: [
    '(sleep 0.2; echo slow) & (echo fast) & wait; echo "waited: $?"',
    'sleep 0.1 & p=$!; wait $p; echo "pid: $?"; false & wait $!; echo "failed job: $?"',
    'timeout 5 echo in-time; timeout 0.2 sleep 5; echo "timeout: $?"',
    'printf "%s\\n" 1 2 3 4 | xargs -P2 -n1 sh -c \'echo x$0\' | sort',
    'find src -name "*.txt" -exec cat {} + && find src -type f -exec wc -c {} \\; | sort && find src -name "*.md" -delete && ls src',
    'sed -i "s/world/there/" src/a.txt && sed -i.bak -e "s/foo/bar/" src/b.txt && cat src/*.txt src/b.txt.bak | tee out.txt | wc -l',
    'diff <(sort src/a.txt) <(sort src/b.txt); echo "diff: $?"; while read -r l; do echo "line: $l"; done < <(cat src/a.txt)',
    'nohup sh -c "echo from nohup" > nohup.log 2>&1; cat nohup.log',
    '(trap "echo trapped" EXIT; echo in subshell)',
    './strict.sh; echo "strict: $?"',
    'pushd src >/dev/null && pwd | sed "s|.*/||" && popd >/dev/null && pwd | sed "s|.*/||"',
    'read -r a b <<< "one two"; echo "$b $a"',
    'd=$(mktemp -d) && echo data > "$d/f" && cat "$d/f" && rm "$d/f" && rmdir "$d" && t=$(mktemp -p . tmp.XXXX) && ls tmp.* | wc -l',
    'true | false; echo "pipe: $?"; set -o pipefail; false | true; echo "pipefail: $?"; (exit 3) | (exit 4); echo "${PIPESTATUS[@]}"; set +o pipefail',
    'yes 0123456789abcdef | head -c 10485760 | md5sum && yes 0123456789 | head -c 2097152 | tail -c 11',
    'printf "\\x00\\x01\\xff\\xfe\\x80 bytes\\n"',
    'ulimit -n 512 && ulimit -n; (umask 077; touch private; stat -c %a private)',
    'exec 3> fd3.txt; echo via-fd-3 >&3; exec 3>&-; cat fd3.txt',
    'echo to-stderr >&2; cat < /dev/null; echo "stdin: $(wc -c)"',
    '{ echo into-log; ls fd3.txt; } > log.txt; cat log.txt',
    'nice -n 5 sh -c nice; taskset -c 0 echo pinned; ionice -c3 echo idle-io; chrt -p $$ >/dev/null && echo chrt',
  ].join('\n'),
};

/** Variables set for one command, as agents write them (they were asked about, and so denied, until issue 29's follow-up). */
export const ONE_COMMAND_VARIABLES: Workflow = {
  name: 'PYTHONPATH=src pytest, LD_LIBRARY_PATH=. ./app, PATH=node_modules/.bin:$PATH tool, MAKEFLAGS=-s make, env VAR=x cmd',
  write: (dir) =>
    files(dir, {
      'src/m.py': 'X = 1\n',
      'tests/test_m.py': 'import m\n\ndef test_x():\n    assert m.X == 1\n',
      'l.c': 'int f(void) { return 4; }\n',
      'main.c': '#include <stdio.h>\nint f(void);\nint main(void) { printf("%d\\n", f()); return 0; }\n',
      'node_modules/.bin/tool': '#!/bin/sh\necho tool "$@"\n',
      Makefile: 'all:\n\t@echo made\n',
    }),
  script: [
    'PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider tests 2>&1 | tail -1 | sed "s/ in .*//"',
    'PYTHONPATH=src python3 -c "import m; print(m.X)"',
    'env PYTHONPATH=src python3 -c "import m; print(m.X + 1)"',
    'gcc -shared -fPIC -o libl.so l.c && gcc main.c -L. -ll -o app && LD_LIBRARY_PATH=. ./app',
    'PATH="$PWD/node_modules/.bin:$PATH" tool f',
    'MAKEFLAGS=-s make; NODE_OPTIONS=--max-old-space-size=256 node -p "1 + 1"',
  ].join(' && '),
};

/**
 * The descriptors the run's shell and its programs have: the caller's, and none of gate-sh's own. First in
 * a fresh session: where its mounts changed (a folder removed and made again) the run goes through
 * bubblewrap joining the session's pid namespace, and bubblewrap leaves that namespace's descriptor (fd 3)
 * open in the command: known, not fixed.
 */
export const DESCRIPTORS: Workflow = {
  name: 'the descriptors of the shell, a program and a background job',
  write: () => undefined,
  // (the shell's own list written to a file first: read while it sets up a pipeline, it holds the pipe's ends,
  // 3 4 5 or none, by timing, under bash as under gate-sh)
  script:
    'ls /proc/$$/fd > .fds; sort -n .fds | tr "\\n" " "; rm .fds; echo; ls /proc/self/fd | sort -n | tr "\\n" " "; echo; ' +
    // (the job looked at once it runs sleep: before, its forked shell's descriptors, by timing)
    'sleep 0.3 & for i in $(seq 2000); do case $(readlink /proc/$!/exe) in */sleep) break ;; esac; done; ' +
    'ls /proc/$!/fd | sort -n | tr "\\n" " "; wait',
};

/**
 * The model's own tools looking at the run's processes: what /proc shows of its shell and of a background
 * job (their program and descriptors, the links a Landlock domain keeps from a process outside it; which
 * descriptors a job has is DESCRIPTORS's). `ls`,
 * `readlink` and `cat` are marked below a program; before, each entered a domain of its own and was refused
 * ('cannot read symbolic link ... Permission denied').
 */
export const INSPECTION: Workflow = {
  name: "the model's ls, readlink and cat on /proc of its shell and of a background job",
  write: () => undefined,
  script:
    'sleep 5 & for i in $(seq 2000); do case $(readlink /proc/$!/exe) in */sleep) break ;; esac; done; ' +
    'ls -l /proc/$!/exe | sed "s/.* -> //"; ls -l /proc/$!/fd > /dev/null && echo job-fds-readable; kill $!; ' +
    'ls -l /proc/$$/fd/1 | sed "s/.* -> //; s/:.*//"; readlink /proc/$$/exe; cat /proc/$$/environ | tr "\\0" "\\n" | grep -c "^PATH="',
};

/** Every workflow of this file, in the order the test runs them. */
export const WORKFLOWS: Workflow[] = [
  DESCRIPTORS,
  INSPECTION,
  CMAKE,
  MAKE_AR,
  CARGO,
  JAVA,
  PYTHON_PACKAGE,
  NODE_TOOLS,
  GIT_MORE,
  SHELL_IDIOMS,
  ONE_COMMAND_VARIABLES,
];
