import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../core/index.ts';
import { formatToolCall } from '../action-format.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { makeCalculator, type CalculatorData } from './env.ts';
import { CalculatorError, evaluateExpression } from './evaluate.ts';
import { calculatorExpert } from './expert.ts';
import { generateExpression } from './generator.ts';

envContract('calculator', () => makeCalculator({ formatPenalty: 0.1 }), {
  makeExpert: calculatorExpert,
  invalidActions: [
    '<tool_call>{"name": "abacus", "arguments": {"expression": "1"}}</tool_call>',
    '<tool_call>{"name": "calculator", "arguments": {"expr": "1"}}</tool_call>',
  ],
  invalidActionReward: -0.1,
});

test('evaluateExpression: precedence, parentheses, unary minus, unicode operators', () => {
  assert.equal(evaluateExpression('2 + 3 * 4'), 14);
  assert.equal(evaluateExpression('(2 + 3) * 4'), 20);
  assert.equal(evaluateExpression('10 - 4 - 3'), 3);
  assert.equal(evaluateExpression('-(3 - 5) * -2'), -4);
  assert.equal(evaluateExpression('7 × 6 − 2'), 40);
  assert.equal(evaluateExpression('0 * -1'), 0);
});

test('evaluateExpression rejects everything but integer arithmetic, with typed errors', () => {
  for (const bad of [
    '',
    '2 +',
    '(1 + 2',
    '1 + 2)',
    '2 / 3',
    'process.exit(1)',
    '1.5 + 1',
    '9'.repeat(17) + ' * 9'.repeat(5),
    `${'('.repeat(60)}1${')'.repeat(60)}`,
  ]) {
    assert.throws(() => evaluateExpression(bad), CalculatorError, bad);
  }
  assert.throws(() => evaluateExpression('2 ^ 3'), /unexpected "\^"; allowed: integers, \+ - \* \( \)/);
});

test('generated expressions print their tree faithfully and get harder with options', () => {
  for (const seed of splitSeeds('train', 300)) {
    const { expression, answer } = generateExpression(new Rng(seed), {
      numOperands: 4,
      maxOperand: 20,
      parentheses: true,
    });
    assert.equal(evaluateExpression(expression), answer, expression);
  }
  const flat = generateExpression(new Rng(1), { numOperands: 5, maxOperand: 9, parentheses: false });
  assert.equal(flat.expression.split(' ').length, 9);
  assert.ok(!flat.expression.includes('('));
});

test('calculator episode: tool result comes back, then an exact answer scores 1', async () => {
  const env = makeCalculator();
  const first = await env.reset({ seed: 0, task: { expression: '(2 + 3) * 4' } });
  assert.equal(first.text, '(2 + 3) * 4');
  let result = await env.step({
    text: `<think>use the tool</think>${formatToolCall({ name: 'calculator', arguments: { expression: '(2+3)*4' } })}`,
  });
  assert.equal(result.observation.text, '<tool_response>20</tool_response>');
  assert.equal((result.observation.data as CalculatorData).lastToolResult, '20');
  result = await env.step({ text: '<answer> 20 </answer>' });
  assert.deepEqual([result.reward, result.done, result.info.success], [1, true, true]);

  await env.reset({ seed: 0, task: { expression: '2 * 3' } });
  result = await env.step({ text: '', toolCall: { id: 'c1', name: 'calculator', arguments: { expression: '2 *' } } });
  assert.equal(
    result.observation.text,
    '<tool_response>error: unexpected end; allowed: integers, + - * ( )</tool_response>',
  );
  assert.equal(result.info.invalidAction, false);
  result = await env.step({ text: '<answer>7</answer>' });
  assert.deepEqual([result.reward, result.done, result.info.success], [0, true, false]);

  await env.reset({ seed: 0, task: { expression: '2 * 3' } });
  result = await env.step({ text: formatToolCall({ name: 'calculator', arguments: { expr: '2 * 3' } }) });
  assert.equal(
    result.observation.text,
    'invalid: invalid arguments for calculator: expression: Invalid input: expected string, received undefined; input: Unrecognized key: "expr"',
  );
  result = await env.step({ text: formatToolCall({ name: 'abacus', arguments: {} }) });
  assert.deepEqual(
    [result.observation.text, result.info.invalidAction, result.info.reason],
    ['invalid: unknown tool "abacus"; allowed: calculator', true, 'unknown tool "abacus"; allowed: calculator'],
  );
});

test('calculator: turns run out without an answer', async () => {
  const env = makeCalculator({ maxTurns: 2 });
  await env.reset({ seed: 5 });
  const call = formatToolCall({ name: 'calculator', arguments: { expression: '1 + 1' } });
  assert.equal((await env.step({ text: call })).truncated, false);
  const last = await env.step({ text: call });
  assert.deepEqual([last.truncated, last.done, last.info.success], [true, false, false]);
});

test('calculator expert solves 100% of 50 test tasks; random answers do clearly worse', async () => {
  const env = makeCalculator({ numOperands: 4 });
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of splitSeeds('test', 50)) {
    const episode = await playEpisode(env, calculatorExpert({ seed }), seed);
    if (episode.success) expertWins++;
    assert.equal(episode.turns, 2);
    if ((await playEpisode(env, calculatorExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 50);
  assert.ok(randomWins < 10, `random won ${randomWins}/50`);
});
