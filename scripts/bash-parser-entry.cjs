// The parts of bash-parser 0.5.0 that src/script/bash-parser-call.ts builds its parser from, as one entry
// for esbuild (scripts/bundle-gate-sh.mjs): bundled, its 87 files (385 KB with babylon) load as one file
// with a code cache, instead of 87 resolutions and compilations at the daemon's first request.
'use strict';
module.exports = {
  utils: require('bash-parser/src/utils'),
  shellLexer: require('bash-parser/src/shell-lexer'),
  compose: require('compose-function'),
  reducers: require('bash-parser/src/modes/posix/tokenizer/reducers'),
  posix: require('bash-parser/src/modes/posix'),
};
