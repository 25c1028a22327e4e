import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../core/index.ts';
import { envContract } from '../contract.ts';
import { splitSeeds } from '../split.ts';
import { makeCalculator } from './env.ts';
import { calculatorExpert } from './expert.ts';
import { generateExpression } from './generator.ts';
import { lastInteger } from './answer.ts';

const chatOptions = { answerFormat: 'last-integer', requireToolCall: true, toolResultTag: false } as const;
const call = (expression: string) => ({
  text: '',
  toolCall: { id: 'c0', name: 'calculator', arguments: { expression } },
});

envContract('calculator', () => makeCalculator(chatOptions), { makeExpert: calculatorExpert });

test('lastInteger: the last integer of a reply, thousands separators and signs read, none → null', () => {
  assert.equal(lastInteger('37 * 23 = 851.'), 851);
  assert.equal(lastInteger('The answer is **1,234**'), 1234);
  assert.equal(lastInteger('It is -42'), -42);
  assert.equal(lastInteger('3 - 5'), 5);
  assert.equal(lastInteger('no number here'), null);
  assert.equal(lastInteger('x'.repeat(10) + '9'.repeat(30)), null); // not a safe integer
});

test('last-integer answers: a reply without a tool call is final, its last integer scored; none is an invalid turn', async () => {
  const env = makeCalculator({ answerFormat: 'last-integer' });
  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  let result = await env.step({ text: 'Sure! 37 * 23 = 851' });
  assert.deepEqual([result.reward, result.done, result.info.success], [1, true, true]);
  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  result = await env.step({ text: 'I cannot compute that.' });
  assert.deepEqual([result.reward === 0, result.done, result.info.invalidAction], [true, false, true]);
  assert.equal(result.observation.text, 'invalid: no integer in the reply; end it with the integer answer');
});

test('requireToolCall: the right answer scores only after a call whose expression evaluates to it', async () => {
  const env = makeCalculator(chatOptions);
  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  let result = await env.step({ text: '851' });
  assert.deepEqual([result.reward, result.done, result.info.success], [0, true, false]);
  assert.equal(result.observation.text, 'wrong: no calculator call gave the answer');

  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  result = await env.step(call('37*23'));
  assert.equal(result.observation.text, '851');
  result = await env.step({ text: 'The answer is 851.' });
  assert.deepEqual([result.reward, result.done, result.info.success], [1, true, true]);

  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  await env.step(call('37 + 23'));
  result = await env.step({ text: '851' });
  assert.deepEqual([result.reward, result.info.success], [0, false]);
});

test('requireToolCall with tag answers; instructions and question are options', async () => {
  const env = makeCalculator({
    requireToolCall: true,
    instructions: 'Use the tool.',
    question: 'What is {expression}?',
  });
  assert.equal(env.instructions, 'Use the tool.');
  assert.equal((await env.reset({ seed: 0, task: { expression: '2 * 3' } })).text, 'What is 2 * 3?');
  assert.equal((await env.step({ text: '<answer>6</answer>' })).info.success, false);
  await env.reset({ seed: 0, task: { expression: '2 * 3' } });
  assert.equal((await env.step(call('2 * 3'))).observation.text, '<tool_response>6</tool_response>');
  assert.equal((await env.step({ text: '<answer>6</answer>' })).info.success, true);
  assert.throws(() => makeCalculator({ question: 'no placeholder' }), /question must contain \{expression\}/);
});

test('operators and minOperand shape the generated tasks; the defaults replay the old stream', () => {
  for (const seed of splitSeeds('test', 50)) {
    const { expression } = generateExpression(new Rng(seed), {
      numOperands: 2,
      minOperand: 10,
      maxOperand: 99,
      parentheses: true,
      operators: ['*'],
    });
    assert.match(expression, /^\d\d \* \d\d$/);
  }
  const before = generateExpression(new Rng(7), { numOperands: 4, maxOperand: 20, parentheses: true });
  const after = generateExpression(new Rng(7), {
    numOperands: 4,
    minOperand: 0,
    maxOperand: 20,
    parentheses: true,
    operators: ['+', '-', '*'],
  });
  assert.deepEqual(after, before);
});

test('toolCallReward: the first call that evaluates to the answer is paid once; success unchanged', async () => {
  const env = makeCalculator({ ...chatOptions, toolCallReward: 0.25 });
  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  assert.equal((await env.step(call('37 * 23'))).reward, 0.25);
  assert.equal((await env.step(call('23 * 37'))).reward, 0);
  const last = await env.step({ text: 'It is 850.' });
  assert.deepEqual([last.reward, last.info.success], [0, false]);
  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  assert.equal((await env.step(call('37 + 23'))).reward, 0);
});
