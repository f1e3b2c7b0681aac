/** Typeahead bookkeeping of the interactive shell (pure): what goes to the line editor, the command, the next prompts. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PromptKeys, Typeahead } from '../../../src/terminal/interactive-typeahead.js';

const b = (s: string) => Buffer.from(s, 'latin1');
const text = (l: Buffer[]) => Buffer.concat(l).toString('latin1');

test('PromptKeys: up to the first line end to the editor, the rest (same chunk or later) typed ahead, rest first', () => {
  const events: string[] = [];
  const k = new PromptKeys(
    (d) => events.push(`editor:${d.toString('latin1')}`),
    (d) => events.push(`ahead:${d.toString('latin1')}`),
  );
  k.push(b('ec'));
  k.push(b('ho a\rls\n'));
  k.push(b('pwd'));
  assert.deepEqual(events, ['editor:ec', 'ahead:ls\n', 'editor:ho a\r', 'ahead:pwd']);
  const n = new PromptKeys((d) => events.push(`editor2:${d.toString('latin1')}`), (d) => events.push(`ahead2:${d.toString('latin1')}`));
  n.push(b('x\n'));
  assert.equal(events.at(-1), 'editor2:x\n', 'no empty rest');
});

test('Typeahead: offered to the command once; unread keys go to the next prompts a line each, in order', () => {
  const t = new Typeahead();
  t.typed(b('first\n'));
  t.typed(b('echo a\n'));
  assert.equal(text(t.forCommand()), 'first\necho a\n', 'the starting command gets what was typed after the Enter');
  assert.deepEqual(t.forCommand(), [], 'once');
  t.typed(b('ls\n')); // typed while the unread keys were fetched
  t.lineEnded(b('echo a\necho b\npw'));
  assert.equal(t.forPrompt().toString('latin1'), 'echo a\n');
  assert.deepEqual(t.forCommand(), [], 'never offered to a command again');
  assert.equal(t.forPrompt().toString('latin1'), 'echo b\n');
  assert.equal(t.forPrompt().toString('latin1'), 'pwls\n', 'a partial line continues with what was typed next');
  assert.equal(t.forPrompt().length, 0);
});

test('Typeahead: a line that did not run passes its typeahead to the prompt; an interrupt flushes everything', () => {
  const t = new Typeahead();
  t.typed(b('date\n'));
  t.notRun();
  assert.equal(t.forPrompt().toString('latin1'), 'date\n');
  t.typed(b('x'));
  t.lineEnded(b('y\nz\n'));
  t.flush();
  assert.equal(t.forPrompt().length, 0);
  assert.deepEqual(t.forCommand(), []);
});
