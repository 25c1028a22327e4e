import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Env, Observation, StepResult } from '../core/types.ts';
import { makeBandit } from '../envs/index.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { rollout } from './rollout.ts';
import { at } from '../core/indexing.ts';

const tinyModel = TransformerModel.create(
  { vocabSize: 272, hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 64, maxSeqLen: 128 },
  { seed: 2 },
);

/** A three-turn env with short texts (fits a 128-token window): turn k pays k/10, any action is valid. */
function makeCounter(): Env {
  let turn = 0;
  const observe = (): Observation => ({ text: `turn ${turn}` });
  return {
    name: 'counter',
    instructions: 'Say a word.',
    async reset() {
      turn = 0;
      return observe();
    },
    async step(): Promise<StepResult> {
      turn++;
      const done = turn === 3;
      return {
        observation: observe(),
        reward: turn / 10,
        done,
        truncated: false,
        info: { invalidAction: false, success: done },
      };
    },
  };
}

test('rollout (builtin tiny model): sampling log-probs equal model.score at masked positions; sampled runs replay', async () => {
  const model = await tinyModel;
  const policy = new BuiltinPolicy({ model });
  for (const temperature of [1, 0.7]) {
    const options = {
      policy,
      env: makeCounter,
      seeds: [1, 2],
      groupSize: 2,
      maxTurns: 3,
      maxNewTokens: 8,
      temperature,
      samplingSeed: 5,
    };
    const { trajectories, stats } = await rollout(options);
    assert.equal(trajectories.length, 4);
    const scored = await model.score(
      trajectories.map((t) => t.tokens),
      { temperature },
    );
    trajectories.forEach((trajectory, i) => {
      assert.ok(trajectory.tokens.length <= model.config.maxSeqLen);
      assert.equal(trajectory.turns.length, 3);
      assert.equal(trajectory.totalReward, 0.1 + 0.2 + 0.3);
      trajectory.lossMask.forEach((mask, t) => {
        if (mask === 1) {
          const difference = Math.abs(at(at(scored.logprobs, i), t) - at(trajectory.logprobs, t));
          assert.ok(
            difference < 1e-4,
            `trajectory ${i} token ${t}: rollout ${trajectory.logprobs[t]} vs score ${at(scored.logprobs, i)[t]}`,
          );
        } else assert.equal(trajectory.logprobs[t], 0);
      });
    });
    assert.ok(stats.generatedTokens > 0 && stats.tokensPerSecond > 0);
    assert.deepEqual((await rollout(options)).trajectories, trajectories, 'same seeds, same trajectories');
  }
});

test('rollout (builtin tiny model × bandit): a random model plays the real env; the window holds every trajectory', async () => {
  // The bandit's first prompt is 114 tokens; a 192-token window leaves every turn room to generate.
  const model = await TransformerModel.create(
    { vocabSize: 272, hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 64, maxSeqLen: 192 },
    { seed: 3 },
  );
  const policy = new BuiltinPolicy({ model });
  const { trajectories, stats } = await rollout({
    policy,
    env: () => makeBandit({ formatPenalty: 0.1 }),
    seeds: [1, 2, 3],
    maxNewTokens: 6,
  });
  assert.equal(stats.episodes, 3);
  for (const trajectory of trajectories) {
    assert.ok(trajectory.tokens.length <= 192);
    assert.equal(trajectory.turns.length, 1);
    assert.equal(at(trajectory.turns, 0).invalidAction, true, 'random bytes are not an action');
    assert.equal(trajectory.totalReward, -0.1);
  }
  assert.equal(stats.invalidActionRate, 1);
});
