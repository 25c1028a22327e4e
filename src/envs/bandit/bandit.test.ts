import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/index.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { makeBandit } from './env.ts';
import { banditExpert } from './expert.ts';

envContract('bandit', () => makeBandit({ formatPenalty: 0.1 }), {
  makeExpert: banditExpert,
  invalidActions: ['<answer>C</answer>', '<answer>A || B</answer>'],
  invalidActionReward: -0.1,
});

test('bandit: the expert always picks the better arm and earns more than random play', async () => {
  const env = makeBandit();
  let expertReward = 0;
  let randomReward = 0;
  let randomBetter = 0;
  for (const seed of splitSeeds('test', 100)) {
    const expert = await playEpisode(env, banditExpert({ seed }), seed);
    assert.equal(expert.success, true);
    assert.equal(expert.last.info.arm, 'B');
    expertReward += expert.totalReward;
    const random = await playEpisode(env, banditExpert({ seed, randomActionRate: 1 }), seed);
    randomReward += random.totalReward;
    if (random.success) randomBetter++;
  }
  assert.ok(randomBetter > 30 && randomBetter < 70, `random picked the better arm ${randomBetter}/100`);
  assert.ok(expertReward > randomReward + 15, `expert ${expertReward} vs random ${randomReward}`);
  assert.ok(expertReward > 65 && expertReward < 95, `expert reward ${expertReward}/100 (p = 0.8)`);
});

test('bandit: arm names from options, matched case-insensitively and by number', async () => {
  const env = makeBandit({ arms: ['red', 'blue', 'green'], payProbabilities: [0.1, 0.2, 0.9] });
  assert.equal((await env.reset({ seed: 3 })).text, 'Arms: red, blue, green');
  assert.equal((await env.step({ text: '<answer>GREEN</answer>' })).info.success, true);
  await env.reset({ seed: 3 });
  assert.equal((await env.step({ text: '<answer>2</answer>' })).info.arm, 'blue');
});

test('bandit: bad options are rejected with the allowed options listed', () => {
  assert.throws(() => makeBandit({ arms: ['A', 'B'], payProbabilities: [0.5, 0.5] }), /exactly one arm/);
  assert.throws(() => makeBandit({ arms: ['A'], payProbabilities: [0.5] }), InvalidArgumentError);
  assert.throws(() => makeBandit({ armz: ['A'] } as never), /allowed options: arms, payProbabilities, formatPenalty/);
});
