import { test } from 'node:test';
import assert from 'node:assert/strict';
import { answerOf, containsPhrase, normalizeText, ownTextOf, toolOutputsOf } from './answer-text.ts';

test('answerOf: the <answer> block, else the reply without its <think> block; normalised', () => {
  assert.equal(answerOf('<think>so 4</think><answer>  Forty\n Two </answer>'), 'forty two');
  assert.equal(answerOf('<think>so 4</think> The result is 42.'), 'the result is 42.');
  assert.equal(answerOf('<think>never closed 42'), '');
  assert.equal(normalizeText(' A\t\tB \n'), 'a b');
});

test('containsPhrase: whole phrases only (12 is not in 123), unicode letters are word characters', () => {
  assert.equal(containsPhrase('the answer is 123', '12'), false);
  assert.equal(containsPhrase('the answer is 12.', '12'), true);
  assert.equal(containsPhrase('x12 then 12', '12'), true);
  assert.equal(containsPhrase('éclair', 'clair'), false);
  assert.equal(containsPhrase('anything', ''), false);
  assert.equal(containsPhrase('(42)', '(42)'), true);
});

test('tool outputs: tagged blocks, or a whole untagged observation after a <tool_call>; the rest is the env’s own text', () => {
  const tagged = 'Step 2. <tool_response>Paris</tool_response> and <information>Long Passage</information>';
  assert.deepEqual(toolOutputsOf(tagged, false), ['paris', 'long passage']);
  assert.equal(ownTextOf(tagged, true), 'step 2. and');
  assert.deepEqual(toolOutputsOf('Plain 42', true), ['plain 42']);
  assert.equal(ownTextOf('Plain 42', true), '');
  assert.deepEqual(toolOutputsOf('Plain 42', false), []);
  assert.equal(ownTextOf('Plain 42', false), 'plain 42');
});
