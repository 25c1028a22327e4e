import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeAbsoluteZero } from '../envs/absolute-zero/env.ts';
import { splitSeeds } from '../envs/split.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { rollout } from '../rollout/rollout.ts';
import { computeAdvantages } from './advantages.ts';
import { algorithmPresets } from './algorithm-presets.ts';
import { runRl } from './rl.ts';
import { policySolver } from './self-play.ts';
import { at } from '../core/indexing.ts';

const proposal = '<answer>{"program": "function f(x) { return x % 2; }", "input": 3}</answer>';

test('absolute zero with one policy: it proposes, its own samples rate the task, it solves; GRPO gives both turns an advantage', async () => {
  // proposes a parity task (f(3) = 1); every reply alternates 1 (right) and 0 (wrong), so 3 solver
  // samples solve 1 or 2 of 3, and the episode's own solve turn is right in every other episode
  const policy = new ScriptedPolicy({
    reply: ({ messages, index }) =>
      messages.at(-1)?.content.startsWith('Propose') ? proposal : `<answer>${index % 2}</answer>`,
  });
  const { trajectories } = await rollout({
    policy,
    env: () => makeAbsoluteZero({ solverSamples: 3 }, { solver: policySolver(policy) }),
    seeds: splitSeeds('train', 2),
    groupSize: 3,
    maxTurns: 4,
    maxNewTokens: 96,
    concurrency: 1,
  });
  for (const trajectory of trajectories) {
    assert.equal(trajectory.turns.length, 2, 'propose, then solve');
    const learnability = at(trajectory.turns, 0).reward;
    assert.ok(
      Math.abs(learnability - 1 / 3) < 1e-12 || Math.abs(learnability - 2 / 3) < 1e-12,
      `its own 3 samples solve 1 or 2: learnability ${learnability}`,
    );
  }
  const solved = trajectories.map((trajectory) => at(trajectory.turns, 1).reward);
  assert.ok(solved.includes(1) && solved.includes(0), `solve rewards ${solved}`);
  const samples = trajectories.map((t) => ({
    lossMask: t.lossMask,
    tokenRewards: t.tokenRewards,
    groupId: t.groupId,
    oldLogprobs: t.logprobs,
  }));
  const { advantages } = computeAdvantages(samples, algorithmPresets.grpo, { gamma: 1, lambda: 1 });
  for (const [i, trajectory] of trajectories.entries()) {
    if (
      trajectories
        .filter((t) => t.groupId === trajectory.groupId)
        .every((t) => t.totalReward === trajectory.totalReward)
    )
      continue;
    for (const turn of trajectory.turns) assert.notEqual(at(advantages, i)[turn.start], 0, 'both roles are trained');
  }
});

test('absolute zero trains end to end with runRl (GRPO), the built-in model proposing and solving', async () => {
  const model = await TransformerModel.create(
    { vocabSize: 272, hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 64, maxSeqLen: 384 },
    { seed: 3 },
  );
  const reference = await TransformerModel.fromParams(model.config, await model.hostParams());
  const policy = new BuiltinPolicy({ model });
  const solver = policySolver(policy, { maxNewTokens: 8 });
  const { history } = await runRl({
    policy,
    reference: new BuiltinPolicy({ model: reference }),
    env: () => makeAbsoluteZero({ solverSamples: 2 }, { solver }),
    config: {
      algo: 'grpo',
      iterations: 1,
      tasksPerIteration: 2,
      groupSize: 2,
      maxTurns: 2,
      maxNewTokens: 24,
      validateEvery: 0,
      validationEpisodes: 2,
    },
  });
  assert.equal(history.length, 1);
  assert.equal(at(history, 0).episodes, 4);
  assert.ok(Number.isFinite(at(history, 0).loss) || at(history, 0).trained === 0);
});
