// node scripts/mvdan-code-cache.cjs CACHE — run by scripts/bundle-gate-sh.mjs at build time. Writes the V8
// code cache src/script/mvdan.ts compiles mvdan-sh (1.5 MB of GopherJS) with: `KEY\n` then V8's data, KEY
// naming the very file it was made from (size, mtime, inode: src/script/mvdan.ts checks it before use;
// V8 itself checks only the source's length). Trained: the package is compiled exactly as mvdan.ts
// compiles it, then parses a few typical scripts, so the cache holds the parser's functions too.
// Measured: compiling the file took 67-146 ms of each daemon start, 5-11 ms with the cache. Exit 0 when written.
'use strict';
const { readFileSync, statSync, writeFileSync } = require('node:fs');
const Module = require('node:module');
const { dirname } = require('node:path');
const vm = require('node:vm');

const file = require.resolve('mvdan-sh');
const st = statSync(file);
const key = `${st.size}:${Math.trunc(st.mtimeMs)}:${st.ino}`;
const script = new vm.Script(Module.wrap(readFileSync(file, 'utf8')), { filename: file });
const mod = { exports: {} };
script.runInThisContext().call(mod.exports, mod.exports, Module.createRequire(file), mod, file, dirname(file));
const { syntax } = mod.exports;
for (const src of ['git status && git diff --stat HEAD~1 | tail -n 3', 'for f in *.ts; do wc -l "$f"; done > /dev/null; echo $x', `x=1; if [ "$x" -gt 1 ]; then echo "big \${x}"; fi`, "cat <<'EOF'\nbody\nEOF", 'a=$(ls | grep -c x) || make -j2 >> log 2>&1 &'])
  syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(src, '');
writeFileSync(process.argv[2], Buffer.concat([Buffer.from(`${key}\n`, 'latin1'), script.createCachedData()]));
