/**
 * Rewards of any finite size give finite advantages (issue 27: a client posting 1e308 and −1e308
 * into one group made GRPO and RLOO advantages NaN and stopped training), and ordinary rewards
 * give exactly what the plain formulas give (the references below are the formulas as they were).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { assertClose } from '../gradient-check.ts';
import { gae } from './gae.ts';
import { grpoAdvantages } from './grpo.ts';
import { reinforcePlusPlusAdvantages } from './reinforce-plus-plus.ts';
import { rlooAdvantages } from './rloo.ts';
import { turnLevelAdvantages } from './turn-level.ts';
import { whiten } from './whiten.ts';

/** Two groups: g holds ±1e308 (the attack) and 1.5e308 twice (a sum past the doubles), h one ordinary spread. */
const tokenRewards = [[0, 1e308], [0, -1e308], [1.5e308, 0], [1.5e308, 0], [0.5], [1]];
const lossMask = tokenRewards.map((rewards) => rewards.map(() => 1));
const groupIds = ['g', 'g', 'g', 'g', 'h', 'h'];

function assertAllFinite(label: string, arrays: readonly ArrayLike<number>[]): void {
  for (const [i, array] of arrays.entries())
    for (let t = 0; t < array.length; t++)
      assert.ok(Number.isFinite(at(array, t)), `${label}[${i}][${t}] = ${at(array, t)}`);
}

describe('advantages of rewards as large as a double allows', () => {
  it('GRPO: finite, and the scale-free values the ordinary rewards would give', () => {
    const { sequenceAdvantages, advantages } = grpoAdvantages({ tokenRewards, lossMask, groupIds });
    assertAllFinite('grpo', advantages);
    // g's scores are 1, −1, 1.5, 1.5 times 1e308: the same advantages as 1, −1, 1.5, 1.5.
    const ordinary = grpoAdvantages({
      tokenRewards: [[1], [-1], [1.5], [1.5]],
      lossMask: [[1], [1], [1], [1]],
      groupIds: [0, 0, 0, 0],
    });
    // (ε = 1e-6 is negligible against a std of 1e308, as it is not against a std of 1: hence 1e-5.)
    for (const [i, expected] of ordinary.sequenceAdvantages.entries())
      assertClose(at(sequenceAdvantages, i), expected, 1e-5);
    assert.ok(at(sequenceAdvantages, 0) > 0 && at(sequenceAdvantages, 1) < 0, 'the spread is not lost');
  });

  it('Dr. GRPO, RLOO: finite; a true advantage beyond the doubles saturates at ±MAX_VALUE', () => {
    const drGrpo = grpoAdvantages({ tokenRewards, lossMask, groupIds, normalizeByStd: false });
    const rloo = rlooAdvantages({ tokenRewards, lossMask, groupIds });
    assertAllFinite('dr-grpo', drGrpo.advantages);
    assertAllFinite('rloo', rloo.advantages);
    assert.equal(at(drGrpo.scores, 2), 1.5e308, 'a score is summed without overflow');
    assertClose(at(drGrpo.sequenceAdvantages, 0), 1e308 - 0.75e308, 1e-12);
    // RLOO: −1e308 minus the mean of the others (4e308 / 3) is below −MAX_VALUE.
    assert.equal(at(rloo.sequenceAdvantages, 1), -Number.MAX_VALUE);
    assertClose(at(rloo.sequenceAdvantages, 0), 1e308 - (1e308 / 3) * 2, 1e-12);
  });

  it('REINFORCE++, GAE + whitening, turn-level: finite', () => {
    assertAllFinite('reinforce++', reinforcePlusPlusAdvantages({ tokenRewards, lossMask }).advantages);
    const values = tokenRewards.map((rewards) => rewards.map(() => -1e308));
    const perSequence = tokenRewards.map((rewards, i) =>
      gae({ tokenRewards: rewards, values: at(values, i), lossMask: at(lossMask, i) }),
    );
    assertAllFinite(
      'gae returns',
      perSequence.map((out) => out.returns),
    );
    assertAllFinite(
      'gae whitened',
      whiten(
        perSequence.map((out) => out.advantages),
        lossMask,
      ),
    );
    const episodes = tokenRewards.map((rewards, i) => ({
      groupId: at(groupIds, i),
      turns: rewards.map((reward) => ({ reward, value: 0 })),
    }));
    for (const estimator of ['grpo', 'grpo-no-std', 'rloo', 'reinforce++', 'gae'] as const)
      assertAllFinite(estimator, turnLevelAdvantages(episodes, { estimator }).advantages);
  });
});

/** The formulas as they were before the scaling: the results of ordinary rewards must not move. */
const plain = {
  grpo(scores: number[], epsilon = 1e-6): number[] {
    const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
    const std = Math.sqrt(scores.reduce((a, x) => a + (x - mean) ** 2, 0) / (scores.length - 1));
    return scores.map((score) => (score - mean) / (std + epsilon));
  },
  rloo(scores: number[]): number[] {
    const n = scores.length;
    const mean = scores.reduce((a, b) => a + b, 0) / n;
    return scores.map((score) => (score * n) / (n - 1) - (mean * n) / (n - 1));
  },
  whiten(values: number[]): number[] {
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const variance = values.reduce((a, x) => a + (x - mean) ** 2, 0) / (values.length - 1);
    const scale = 1 / Math.sqrt(variance + 1e-8);
    return values.map((x) => (x - mean) * scale);
  },
};

describe('ordinary rewards: bit for bit the plain formulas', () => {
  it('GRPO, RLOO and whitening of random rewards up to 1e6 equal the plain formulas exactly', () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 200; trial++) {
      const magnitude = 10 ** Math.floor(rng.next() * 7); // 1 … 1e6
      const scores = Array.from({ length: 2 + Math.floor(rng.next() * 7) }, () => (rng.next() * 2 - 1) * magnitude);
      const rows = scores.map((score) => [score]);
      const mask = scores.map(() => [1]);
      const ids = scores.map(() => 0);
      assert.deepEqual(
        grpoAdvantages({ tokenRewards: rows, lossMask: mask, groupIds: ids }).sequenceAdvantages,
        plain.grpo(scores),
      );
      assert.deepEqual(
        rlooAdvantages({ tokenRewards: rows, lossMask: mask, groupIds: ids }).sequenceAdvantages,
        plain.rloo(scores),
      );
      assert.deepEqual(
        Array.from(whiten([scores], [scores.map(() => 1)]).flatMap((row) => Array.from(row))),
        plain.whiten(scores),
      );
    }
  });
});
