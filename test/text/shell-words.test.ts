/**
 * src/text/shell-words.ts, the one quoting of shell source (issue 32): what it writes, bash reads back as
 * the same words — quotes, `!`, `$`, backquotes, backslashes, newlines, a leading `-` or `~`, globs, an empty
 * word — in a real bash, and in an interactive one (history expansion on). Plain words stay bare.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { shellCommand, shellWord } from '../../src/text/shell-words.js';

const WORDS = ["a'b", 'a!b', "it's !x", '$HOME', '`id`', '$(id)', 'a\nb', '', '"q"', '\\', '\\n', '-e', '~', '~root', '*', '?', '[a]', '#x', 'a b', 'tab\there',
  'é☃', "'", '!', '!!', "a'b\"c$d`e\\f!g\nh", 'x=y', '{a,b}', ';', '&&', '|', '>', 'a\u202eb'];

test('bash reads every word back as it was, also with history expansion on', () => {
  for (const histexpand of [false, true]) {
    // history expansion (`!`) happens on the lines an interactive shell reads (after one in its history)
    // (a typed tab is completion there, whatever the quoting)
    const words = histexpand ? WORDS.filter((w) => !w.includes('\t')) : WORDS;
    const script = `printf '%s\\0' ${shellCommand(words)}`;
    const r = histexpand
      ? spawnSync('bash', ['--norc', '--noprofile', '-i'], { input: `true\n${script}\n`, encoding: 'utf8' })
      : spawnSync('bash', ['-c', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.split('\0').slice(0, -1), words, `histexpand ${histexpand}`);
  }
});

test('plain words stay bare', () => {
  for (const w of ['git', '/usr/bin/gate-sh', 'a=b', 'x:y', 'a,b', '-c', 'v1.2+3@host%'] as const) assert.equal(shellWord(w), w);
  assert.equal(shellCommand(['/usr/bin/gate-sh', '-c', "echo 'hi'"]), `/usr/bin/gate-sh -c "echo 'hi'"`);
});
