// node scripts/parser-code-cache.cjs mvdan CACHE | bash-parser BUNDLE CACHE ID — run by
// scripts/bundle-gate-sh.mjs at build time. Writes the V8 code cache the daemon compiles a parser with:
// `KEY\n` then V8's data (src/script/code-cache.ts; V8 itself checks only the source's length, so the key
// names the very source: for mvdan-sh, 1.5 MB of GopherJS in node_modules, the file's size, mtime and
// inode, checked by src/script/mvdan.ts; for bash-parser's bundle, its build id). Trained: the source is
// compiled exactly as the daemon compiles it, then parses a few typical scripts, so the cache holds the
// parser's functions too. Measured: compiling mvdan-sh took 67-146 ms of each daemon start, 5-11 ms with
// the cache. Exit 0 when written.
'use strict';
const { readFileSync, statSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname, resolve } = require('node:path');
const vm = require('node:vm');

const SCRIPTS = ['git status && git diff --stat HEAD~1 | tail -n 3', 'for f in *.ts; do wc -l "$f"; done > /dev/null; echo $x', 'x=1; if [ "$x" -gt 1 ]; then echo "big ${x}"; fi', "cat <<'EOF'\nbody\nEOF", 'a=$(ls | grep -c x) || make -j2 >> log 2>&1 &', 'echo $((1 + 2))'];

function compile(file) {
  const script = new vm.Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file });
  const mod = { exports: {} };
  script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, dirname(file));
  return { script, exports: mod.exports };
}

const [kind, ...args] = process.argv.slice(2);
let key, cache, script;
if (kind === 'mvdan') {
  const file = require.resolve('mvdan-sh');
  const st = statSync(file);
  key = `${st.size}:${Math.trunc(st.mtimeMs)}:${st.ino}`;
  cache = args[0];
  const c = compile(file);
  script = c.script;
  const { syntax } = c.exports;
  for (const src of SCRIPTS) syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(src, '');
} else if (kind === 'bash-parser') {
  const [bundle, cacheFile, id] = args;
  key = id;
  cache = cacheFile;
  const c = compile(resolve(bundle));
  script = c.script;
  // the parser as src/script/bash-parser-call.ts builds it, through the stock entry's own composition
  const { utils, posix } = c.exports;
  const mode = posix.init(null, utils);
  for (const src of SCRIPTS) {
    try {
      const parser = new mode.grammar.Parser();
      parser.lexer = c.exports.shellLexer(mode, { insertLOC: true, mode: 'posix' });
      parser.yy = mode.astBuilder({ insertLOC: true, mode: 'posix' });
      parser.parse(src);
    } catch {
      // a script bash-parser rejects still compiles its paths
    }
  }
} else {
  process.stderr.write('usage: parser-code-cache.cjs mvdan CACHE | bash-parser BUNDLE CACHE ID\n');
  process.exit(2);
}
writeFileSync(cache, Buffer.concat([Buffer.from(`${key}\n`, 'latin1'), script.createCachedData()]));
