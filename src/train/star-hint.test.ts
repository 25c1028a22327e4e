/**
 * STaR's hint as earlier turns: the hint env plays the same task with the turns rendered before
 * its first observation in the model's template (the prompt the model sees is the template's own
 * rendering of those turns then the question), and hint files of the wrong shape are refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import { makeCalculator } from '../envs/calculator/env.ts';
import { readStarHint, withEarlierTurns } from './star-hint.ts';

const presetHint = new URL('../../presets/calculator-call-turns.jsonl', import.meta.url).pathname;

test('withEarlierTurns: the first observation is the template rendering the hint turns then the question; the task and the later turns are unchanged', async () => {
  const format = tinyChatmlFormat();
  const turns = await readStarHint(presetHint);
  assert.deepEqual(
    turns.map((turn) => [turn.role, turn.content, turn.toolCalls?.[0]?.arguments]),
    [
      ['user', 'What is 12 * 34?', undefined],
      ['assistant', '', { expression: '12 * 34' }],
      ['user', 'What is 56 * 78?', undefined],
      ['assistant', '', { expression: '56 * 78' }],
    ],
  );
  const options = { operators: ['*'] as const, minOperand: 10, maxOperand: 99, question: 'What is {expression}?' };
  const plain = makeCalculator({ ...options, operators: ['*'] });
  const hinted = withEarlierTurns(() => makeCalculator({ ...options, operators: ['*'] }), turns, format)();
  for (const seed of [3, 4]) {
    const [task, withHint] = [await plain.reset({ seed }), await hinted.reset({ seed })];
    assert.deepEqual([withHint.data, withHint.privileged], [task.data, task.privileged]);
    assert.notEqual(withHint.text, task.text);
    assert.ok(withHint.text.endsWith(task.text));
    // The user message holding the hinted text renders to the same tokens as the real earlier turns before the question.
    assert.deepEqual(
      format.render([{ role: 'user', content: withHint.text }]).tokens,
      format.render([...turns, { role: 'user', content: task.text }]).tokens,
    );
    const expression = task.text.slice('What is '.length, -1);
    const call = { text: '', toolCall: { id: 'c', name: 'calculator', arguments: { expression } } };
    assert.deepEqual(await hinted.step(call), await plain.step(call));
  }
});

test('readStarHint refuses a file that is not one conversation of earlier turns, naming the file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-star-hint-'));
  try {
    const cases: [string, RegExp][] = [
      ['', /holds 0 conversations; a hint is one/],
      [
        '{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}\n{"messages":[{"role":"user","content":"c"}]}',
        /holds 2 conversations/,
      ],
      [
        '{"messages":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}',
        /a system message: the hint's turns come after the env's instructions/,
      ],
      ['{"messages":[{"role":"assistant","content":"b"}]}', /the first turn must be a user message with text/],
      [
        '{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}',
        /the last turn is a user message: the task's own question follows the hint/,
      ],
      ['{"messages":[{"role":"user"}]}', /hint\.jsonl:1: messages\.0\.content: content is missing/],
      ['not json', /hint\.jsonl:1: invalid JSON/],
    ];
    const file = join(dir, 'hint.jsonl');
    for (const [text, expected] of cases) {
      await writeFile(file, text);
      await assert.rejects(readStarHint(file), (error: Error) => {
        assert.equal(error.name, 'DataFormatError');
        assert.match(error.message, expected);
        assert.match(error.message, /hint\.jsonl/);
        return true;
      });
    }
    await assert.rejects(readStarHint(join(dir, 'missing.jsonl')), /missing\.jsonl: cannot read/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
