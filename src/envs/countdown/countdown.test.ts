import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../core/index.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { checkEquation, generateCountdown, solveCountdown } from './countdown.ts';
import { makeCountdown } from './env.ts';
import { countdownExpert } from './expert.ts';

envContract('countdown', () => makeCountdown({ formatPenalty: 0.1 }), {
  makeExpert: countdownExpert,
  invalidActions: ['<tool_call>{"name": "calculator", "arguments": {}}</tool_call>'],
  invalidActionReward: -0.1,
});

test('the verifier checks the value and that each number is used at most once', () => {
  const task = { numbers: [25, 5, 3, 7], target: 60 };
  assert.deepEqual(checkEquation('(25 - 5) * 3', task), { kind: 'correct' });
  assert.deepEqual(checkEquation('(25 - 5) * 3 = 60', task), { kind: 'correct' });
  assert.equal(checkEquation('(25 - 5) * 3 = 61', task).kind, 'wrong');
  assert.match(JSON.stringify(checkEquation('25 + 25 + 5 + 5', task)), /25 is not available/);
  assert.match(JSON.stringify(checkEquation('60', task)), /60 is not available/);
  assert.equal(checkEquation('25 * 3 - 7', task).kind, 'wrong');
  assert.equal(checkEquation('25 *', task).kind, 'unreadable');
  assert.equal(checkEquation('12.5 * 4 + 7 + 3', task).kind, 'unreadable');
  assert.deepEqual(checkEquation('(7 - 3) / (5 - 3) * 25 + 5', { numbers: [7, 3, 5, 3, 25, 5], target: 55 }), {
    kind: 'correct',
  });
});

test('generated tasks are solvable and the solver finds an equation the verifier accepts', () => {
  for (const seed of splitSeeds('train', 200)) {
    const task = generateCountdown(new Rng(seed), { numCount: 4, maxNumber: 99, maxTarget: 100 });
    assert.ok(task.target >= 1 && task.target <= 100);
    const equation = solveCountdown(task);
    assert.ok(equation !== null, JSON.stringify(task));
    assert.deepEqual(checkEquation(equation, task), { kind: 'correct' }, `${equation} for ${JSON.stringify(task)}`);
  }
});

test('countdown expert solves 50/50; a random equation rarely does and earns the partial reward', async () => {
  const env = makeCountdown();
  let expertWins = 0;
  let randomWins = 0;
  let randomPartial = 0;
  for (const seed of splitSeeds('test', 50)) {
    if ((await playEpisode(env, countdownExpert({ seed }), seed)).success) expertWins++;
    const random = await playEpisode(env, countdownExpert({ seed, randomActionRate: 1 }), seed);
    if (random.success) randomWins++;
    if (random.totalReward === 0.1) randomPartial++;
  }
  assert.equal(expertWins, 50);
  assert.ok(randomWins < 10, `random won ${randomWins}/50`);
  assert.ok(randomPartial > 40, `partial ${randomPartial}/50`);
});
