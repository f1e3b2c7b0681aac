/**
 * The real projects the realwork suite runs (issue 29): each is written afresh into a folder and run by a
 * script an agent would send, under gate-sh and under plain bash. Test-only; the tools are Debian's
 * (autoconf, automake, gcc, make, python3 with python3-pytest, perl) and node/npm as installed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers/env.js';

export interface Project {
  name: string;
  /** writes the project into `dir` (which exists and is empty) */
  write(dir: string): void;
  /** what the agent runs there */
  script: string;
}

function files(dir: string, tree: Record<string, string>): void {
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text, { mode: path.endsWith('.sh') ? 0o755 : 0o644 });
  }
}

/** An autoconf/automake project: configure checks, a program, a test suite (`make check`). */
export const AUTOCONF: Project = {
  name: 'autoconf: autoreconf -i && ./configure && make && make check',
  write: (dir) =>
    files(dir, {
      'configure.ac': [
        'AC_INIT([hello], [1.0])',
        'AM_INIT_AUTOMAKE([foreign -Wall -Werror])',
        'AC_PROG_CC',
        'AC_CHECK_HEADERS([unistd.h])',
        'AC_CONFIG_HEADERS([config.h])',
        'AC_CONFIG_FILES([Makefile])',
        'AC_OUTPUT',
        '',
      ].join('\n'),
      'Makefile.am': 'bin_PROGRAMS = hello\nhello_SOURCES = hello.c util.c util.h\nTESTS = check_hello.sh\nEXTRA_DIST = check_hello.sh\n',
      'hello.c': '#include "config.h"\n#include <stdio.h>\n#include "util.h"\nint main(void) { printf("%s\\n", greeting()); return 0; }\n',
      'util.c': '#include "util.h"\nconst char *greeting(void) { return "Hello, " PACKAGE_STRING; }\n',
      'util.h': '#include "config.h"\nconst char *greeting(void);\n',
      'check_hello.sh': '#!/bin/sh\n./hello | grep -q "Hello, hello 1.0"\n',
    }),
  script: 'autoreconf -i && ./configure && make && make check',
};

/** The same project, already bootstrapped (the bench's build: configure + make + check). */
export function bootstrapped(dir: string, env: Record<string, string>): void {
  AUTOCONF.write(dir);
  execFileSync('autoreconf', ['-i'], { cwd: dir, env, stdio: 'ignore' });
}

/** A Makefile with objects, a clean target (`rm -rf`, `rm -f`), and a rebuild. */
export const MAKEFILE: Project = {
  name: 'Makefile: make, make clean && make',
  write: (dir) =>
    files(dir, {
      Makefile: [
        'CFLAGS = -O0',
        'OBJS = build/a.o build/b.o',
        'prog: $(OBJS)',
        '\t$(CC) -o $@ $(OBJS)',
        'build/%.o: %.c | build',
        '\t$(CC) $(CFLAGS) -c -o $@ $<',
        'build:',
        '\tmkdir -p build',
        'clean:',
        '\trm -rf build',
        '\trm -f prog',
        '.PHONY: clean',
        '',
      ].join('\n'),
      'a.c': 'int b(void);\nint main(void) { return b(); }\n',
      'b.c': 'int b(void) { return 0; }\n',
    }),
  script: 'make && ./prog && make clean && ls && make && ls build',
};

/** A virtualenv with the system's pytest, activated in the same shell, then the tests. */
export const VENV: Project = {
  name: 'python3 -m venv --system-site-packages, activate, pytest',
  write: (dir) =>
    files(dir, {
      'calc.py': 'def add(a, b):\n    return a + b\n',
      'test_calc.py': 'from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n\ndef test_env():\n    import sys\n    assert sys.prefix != sys.base_prefix\n',
    }),
  script:
    'python3 -m venv --system-site-packages .venv && . .venv/bin/activate && python -c "import sys; print(sys.prefix.endswith(\'.venv\'))" && ' +
    'python -m pytest -q -p no:cacheprovider && deactivate && source .venv/bin/activate && python -m pytest -q -p no:cacheprovider test_calc.py && deactivate',
};

/** `npm pack` of a package already in node_modules (shell-quote: no dependencies), kept for the suite. */
let packed: string | undefined;
function shellQuoteTarball(into: string): string {
  if (!packed) {
    mkdirSync(into, { recursive: true });
    execFileSync('npm', ['pack', '--ignore-scripts', join(ROOT, 'node_modules', 'shell-quote'), '--pack-destination', into], { stdio: 'ignore' });
    packed = join(into, readdirSync(into).find((f) => f.startsWith('shell-quote-') && f.endsWith('.tgz'))!);
  }
  return packed;
}

/** `npm install` of a real dev dependency from a local tarball (nothing reaches the network), then `npm test`. */
export function npmProject(tarballs: string): Project {
  return {
    name: 'npm install (a dev dependency from a tarball) && npm test',
    write: (dir) => {
      const tgz = shellQuoteTarball(tarballs);
      mkdirSync(join(dir, 'vendor'));
      writeFileSync(join(dir, 'vendor', 'shell-quote.tgz'), execFileSync('cat', [tgz]));
      files(dir, {
        'package.json': JSON.stringify(
          { name: 'proj', version: '1.0.0', private: true, scripts: { test: 'node test.js && rm -rf tmp-out' }, devDependencies: { 'shell-quote': 'file:vendor/shell-quote.tgz' } },
          null,
          2,
        ),
        'test.js': "const { quote } = require('shell-quote');\nrequire('fs').mkdirSync('tmp-out');\nconsole.log(quote(['a b', \"it's\"]));\n",
        '.npmrc': 'audit=false\nfund=false\nupdate-notifier=false\noffline=true\n',
      });
    },
    script: 'export npm_config_cache="$PWD/.npm-cache"; npm install --no-progress && npm test && ls node_modules',
  };
}

/** Inline code, one line each, as agents send it. */
export const ONE_LINERS: Project = {
  name: 'python -c, node -e, perl -e one-liners',
  write: (dir) => files(dir, { 'data.txt': 'b\na\nc\n' }),
  script: [
    `python3 -c 'import os, sys; print(sorted(open("data.txt").read().split())); os.makedirs("out", exist_ok=True); open("out/p", "w").write("x"); sys.exit(0)'`,
    `node -e 'const fs = require("fs"); console.log(fs.readFileSync("data.txt", "utf8").trim().split("\\n").length); fs.rmSync("out/p")'`,
    `perl -e 'open(my $f, "<", "data.txt"); my @l = <$f>; print scalar(@l), "\\n"'`,
    'ls out',
  ].join(' && ') + `\npython3 - <<'EOF'\nprint("from stdin")\nEOF\n`,
};

/** A shell script run with `sh`, and one run as `bash file`, each cleaning up after itself. */
export const SH_SCRIPT: Project = {
  name: 'sh build.sh, bash file',
  write: (dir) =>
    files(dir, {
      'build.sh': '#!/bin/sh\nset -e\nmkdir -p dist\necho built > dist/out.txt\nrm -rf dist/old\ncp dist/out.txt dist/copy.txt\nrm -f dist/out.txt\ncat dist/copy.txt\n',
      'clean.sh': 'rm -rf dist\necho cleaned\n',
    }),
  script: 'sh ./build.sh && ls dist && bash clean.sh && ls',
};
