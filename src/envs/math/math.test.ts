import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatToolCall } from '../action-format.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { answerMatches, readAnswer } from './answer-check.ts';
import { makeMath } from './env.ts';
import { mathExpert } from './expert.ts';
import { evaluateRational, formatRational, rational } from './rational.ts';

envContract('math', () => makeMath({ formatPenalty: 0.1 }), {
  makeExpert: mathExpert,
  invalidActions: ['<tool_call>{"name": "calculator", "arguments": {"expr": "1"}}</tool_call>'],
  invalidActionReward: -0.1,
});

test('evaluateRational is exact: fractions, decimals, precedence', () => {
  assert.equal(formatRational(evaluateRational('(20 - 5) / 3')), '5');
  assert.equal(formatRational(evaluateRational('7 / 2')), '7/2');
  assert.equal(formatRational(evaluateRational('0.1 + 0.2')), '3/10');
  assert.equal(formatRational(evaluateRational('-(1 - 4) * 2 / -4')), '-3/2');
  assert.throws(() => evaluateRational('1 / 0'), /division by zero/);
  assert.throws(() => evaluateRational('2 ^ 3'), /unexpected "\^"/);
});

test('the answer checker accepts every form of the value and nothing else', () => {
  const half = rational(1, 2);
  for (const form of ['0.5', '1/2', '.5', ' 1 / 2 ', 'x = 0.5', '0.50 km', '$0.5'])
    assert.ok(answerMatches(form, half), form);
  for (const form of ['0.4', '2', '1/3', '0.5 or 1', 'half', '']) assert.ok(!answerMatches(form, half), form);
  const big = rational(22040);
  for (const form of ['22,040', '22040 dollars', '$22,040.00', '22040.0']) assert.ok(answerMatches(form, big), form);
  assert.ok(!answerMatches('22,04', big));
  assert.ok(answerMatches('1 1/2 cups', rational(3, 2)));
  assert.ok(answerMatches('-17/8', rational(-17, 8)));
  assert.ok(answerMatches('0.33', rational(1, 3)), 'rounded to 2 places');
  assert.ok(!answerMatches('0.3', rational(1, 3)), 'one place is too coarse');
  assert.deepEqual(readAnswer('x = -3'), { value: rational(-3), decimals: 0 });
});

test('math episode: calculator result, then a correct answer in another form; format reward is optional', async () => {
  const env = makeMath({ formatReward: 0.2 });
  await env.reset({ seed: 0, task: { question: 'Split 7 cakes between 2 people.', solution: '7 / 2', unit: 'cakes' } });
  const tool = await env.step({ text: formatToolCall({ name: 'calculator', arguments: { expression: '7/2' } }) });
  assert.equal(tool.observation.text, '<tool_response>7/2</tool_response>');
  const bad = await env.step({ text: formatToolCall({ name: 'calculator', arguments: { expression: '1/0' } }) });
  assert.match(bad.observation.text, /error: division by zero/);
  assert.equal(bad.info.invalidAction, false);
  const last = await env.step({ text: '<think>half of 7</think><answer>3.5 cakes</answer>' });
  assert.deepEqual([last.reward, last.done, last.info.success], [1.2, true, true]);
  await env.reset({ seed: 0, task: { question: 'q', solution: '7 / 2' } });
  assert.equal((await env.step({ text: '<answer>3</answer>' })).reward, 0);
});

test('math expert solves 50/50 test problems of every kind; random answers do not', async () => {
  const env = makeMath();
  let expertWins = 0;
  let randomWins = 0;
  const kinds = new Set<string>();
  for (const seed of splitSeeds('test', 50)) {
    const episode = await playEpisode(env, mathExpert({ seed }), seed);
    kinds.add((episode.last.observation.data as { problem: { kind: string } }).problem.kind);
    if (episode.success) expertWins++;
    if ((await playEpisode(env, mathExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 50);
  assert.deepEqual([...kinds].sort(), ['arithmetic', 'linear', 'word']);
  assert.ok(randomWins < 10, `random won ${randomWins}/50`);
});
