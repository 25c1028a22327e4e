import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../core/index.ts';
import { rollout } from '../../rollout/rollout.ts';
import { ScriptedPolicy } from '../../policy/scripted-policy.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { makeNegotiation, type NegotiationData } from './env.ts';
import { negotiationExpert } from './expert.ts';
import { generateNegotiation, shareValue } from './game.ts';

envContract('negotiation', () => makeNegotiation({ formatPenalty: 0.1 }), {
  makeExpert: negotiationExpert,
  invalidActions: ['<answer>accept</answer>', '<answer>take 9 9 9</answer>', '<answer>take 1 2</answer>'],
  invalidActionReward: -0.1,
});

test('valuations: each agent values the whole pool at 10', () => {
  for (const seed of splitSeeds('train', 100)) {
    const task = generateNegotiation(new Rng(seed));
    for (const agent of [0, 1]) assert.equal(shareValue(task, agent, task.counts), 10);
  }
});

test('two policies act in turn, each sees its own values; rewards per agent, joint reward on the deal', async () => {
  const env = makeNegotiation();
  const task = {
    counts: [1, 2, 3],
    values: [
      [4, 0, 2],
      [0, 2, 2],
    ],
  };
  let observation = await env.reset({ seed: 0, task });
  assert.match(
    observation.text,
    /^You are Alice\. Items: books 1, hats 2, balls 3\.\nYour values: books 4, hats 0, balls 2\.$/,
  );
  const alice = (o: typeof observation) =>
    (o.data as NegotiationData).agent === 0 ? '<answer>take 1 0 2</answer>' : 'unused';
  let result = await env.step({ text: alice(observation) });
  observation = result.observation;
  assert.equal((observation.data as NegotiationData).agent, 1);
  assert.match(
    observation.text,
    /^You are Bob\..*\nYour values: books 0, hats 2, balls 2\.\nAlice proposed to take 1 0 2\.$/s,
  );
  result = await env.step({ text: '<answer>accept</answer>' });
  // Alice keeps 1 book + 2 balls = 8, Bob gets 2 hats + 1 ball = 6
  assert.deepEqual(result.info.agentRewards, [0.8, 0.6]);
  assert.equal(result.reward, 0.7);
  assert.equal(result.done, true);
  assert.equal(
    result.info.success,
    true,
    'joint 8 + 6 = 14 = the best: books to Alice 4, hats to Bob 4, balls 6 either way',
  );
});

test('the cooperative expert always closes a joint-optimal deal; random play rarely does', async () => {
  const env = makeNegotiation();
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of splitSeeds('test', 50)) {
    const episode = await playEpisode(env, negotiationExpert({ seed }), seed);
    if (episode.success) expertWins++;
    assert.equal(episode.turns, 2);
    if ((await playEpisode(env, negotiationExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 50);
  assert.ok(randomWins < 15, `random ${randomWins}/50`);
});

test('one shared policy plays both agents in one trajectory (MAGRPO-style rollout)', async () => {
  const policy = new ScriptedPolicy({
    reply: ({ messages }) => {
      const last = messages.at(-1)?.content ?? '';
      return last.includes('proposed to take') ? '<answer>accept</answer>' : '<answer>take 1 1 1</answer>';
    },
  });
  const { trajectories } = await rollout({
    policy,
    env: () => makeNegotiation(),
    seeds: splitSeeds('train', 3),
    groupSize: 2,
    maxTurns: 6,
  });
  for (const trajectory of trajectories) {
    assert.equal(trajectory.turns.length, 2, 'Alice proposes, Bob (same policy) accepts');
    const [propose, accept] = trajectory.turns;
    assert.equal(propose?.reward, 0);
    assert.ok((accept?.reward ?? 0) > 0);
  }
});
