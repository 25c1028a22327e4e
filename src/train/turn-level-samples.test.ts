/**
 * Pins what the bounded-history update trains on (`turnLevelSamples`), bit for bit, on a seeded
 * batch for every preset and both turn weightings: the fingerprints below were taken from the
 * implementation before turn-level credit moved to src/algorithms/advantages/turn-level.ts, so a
 * refactor that changes one bit of an advantage, a return or a pass-through array fails here.
 *
 * Scores come from fixed tables (a function of the token id and its position), not a model, so the
 * pin does not depend on the tensor library's float32 arithmetic.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Trajectory, TrajectorySegment } from '../core/types.ts';
import type { TokenBatch } from '../policy/types.ts';
import { algorithmNames } from './algorithm-presets.ts';
import { effectivePreset, rlConfigSchema, type RlConfigInput } from './rl.ts';
import { turnLevelSamples, type TrainingSample } from './rl-update.ts';

/** 3 groups × 3 episodes of 1–4 turns; group "uniform" has equal returns, the last episode is cut. */
function seededTurnBatch(seed = 19): Trajectory[] {
  const rng = new Rng(seed);
  const rewardsChoice = [0, 1, -0.5, 0.25];
  const trajectories: Trajectory[] = [];
  for (const groupId of ['g0', 'g1', 'uniform']) {
    for (let e = 0; e < 3; e++) {
      const turnCount = 1 + rng.int(4);
      const segments: TrajectorySegment[] = [];
      const turns: Trajectory['turns'] = [];
      for (let k = 0; k < turnCount; k++) {
        const prompt = 2 + rng.int(4);
        const reply = 1 + rng.int(4);
        const tokens = Array.from({ length: prompt + reply }, () => rng.int(256));
        const lossMask = tokens.map((_, t) => (t < prompt ? 0 : 1));
        const logprobs = lossMask.map((m) => (m === 1 ? -3 * rng.next() : 0));
        segments.push({ turn: k, tokens, lossMask, logprobs });
        const reward =
          groupId === 'uniform' ? (k === turnCount - 1 ? 1 : 0) : at(rewardsChoice, rng.int(rewardsChoice.length));
        turns.push({ start: 0, end: 0, reward, action: '', observation: '', invalidAction: false });
      }
      const totalReward = turns.reduce((sum, turn) => sum + turn.reward, 0);
      trajectories.push({
        tokens: [],
        lossMask: [],
        logprobs: [],
        tokenRewards: [],
        turns,
        totalReward,
        success: totalReward > 0,
        groupId,
        seed: trajectories.length,
        truncated: groupId === 'uniform' && e === 2,
        segments,
      });
    }
  }
  return trajectories;
}

/** A frozen reference's log-probs as a fixed table of (token, position). */
const tableReference = {
  async logprobs({ sequences }: TokenBatch): Promise<Float32Array[]> {
    return sequences.map((tokens) => Float32Array.from(tokens, (token, t) => -(((token * 31 + t * 7) % 97) / 40)));
  },
};

/** A value head as a fixed table of (token, position). */
const tableValues = {
  async values({ sequences }: TokenBatch): Promise<Float32Array[]> {
    return sequences.map((tokens) => Float32Array.from(tokens, (token, t) => ((token * 13 + t) % 50) / 25 - 1));
  },
};

function fingerprint(samples: readonly TrainingSample[]): string {
  const hash = createHash('sha256');
  const put = (label: string, values: ArrayLike<number> | undefined) => {
    hash.update(label);
    if (values !== undefined) hash.update(new Uint8Array(Float64Array.from(Array.from(values)).buffer));
  };
  for (const sample of samples) {
    put('t', sample.tokens);
    put('m', sample.lossMask);
    put('o', sample.oldLogprobs);
    put('r', sample.refLogprobs);
    put('a', sample.advantages);
    put('R', sample.returns);
    put('v', sample.oldValues);
  }
  return hash.digest('hex').slice(0, 16);
}

const cases: { name: string; config: RlConfigInput }[] = algorithmNames.flatMap((algo) =>
  (['turn', 'episode'] as const).map((turnWeighting) => ({
    name: `${algo} ${turnWeighting}`,
    config: { algo, turnWeighting, historyTurns: 1, gamma: 0.9, lambda: 0.8 },
  })),
);
// KL in the reward made large enough to move the advantages.
cases.push(
  ...(['rloo', 'reinforce++', 'ppo'] as const).map((algo) => ({
    name: `${algo} klCoef 0.05`,
    config: { algo, historyTurns: 1, gamma: 0.9, lambda: 0.8, klCoef: 0.05 },
  })),
);

/** Taken from the pre-refactor `turnLevelSamples` (dapo, gspo and cispo share the GRPO advantage and no reference, so their samples are equal). */
const pinned: Record<string, string> = {
  'grpo turn': 'de7813b98c55fb8a',
  'grpo episode': 'bcb5006a2a5ef0ac',
  'dr-grpo turn': 'baba0e645043c0f7',
  'dr-grpo episode': '34a99b9f7fc4cc3f',
  'dapo turn': '8dacc198834e489c',
  'dapo episode': 'f8d9f865ba416e2b',
  'gspo turn': '8dacc198834e489c',
  'gspo episode': 'f8d9f865ba416e2b',
  'cispo turn': '8dacc198834e489c',
  'cispo episode': 'f8d9f865ba416e2b',
  'rloo turn': 'a1a871370bc81161',
  'rloo episode': 'e1985a1b22ded1c4',
  'reinforce++ turn': 'a6496447369aea0b',
  'reinforce++ episode': '40838e046109f517',
  'ppo turn': 'dc9d6bdbd4641dab',
  'ppo episode': '908caebe568088e4',
  'rloo klCoef 0.05': '5671dc94541c7579',
  'reinforce++ klCoef 0.05': 'e19fd651fa9adcd8',
  'ppo klCoef 0.05': '1a88d875b7ed9420',
};

test('turnLevelSamples: every preset and turn weighting reproduces the pinned samples bit for bit', async () => {
  const trajectories = seededTurnBatch();
  const got: Record<string, string> = {};
  for (const { name, config } of cases) {
    const parsed = rlConfigSchema.parse(config);
    const { samples } = await turnLevelSamples(
      tableValues,
      tableReference,
      trajectories,
      effectivePreset(parsed),
      parsed,
    );
    assert.equal(
      samples.length,
      trajectories.reduce((n, t) => n + t.segments!.length, 0),
      name,
    );
    got[name] = fingerprint(samples);
  }
  if (process.env.AGENTRL_PRINT_PINS === '1') console.log(JSON.stringify(got, null, 2));
  assert.deepEqual(got, pinned);
});
