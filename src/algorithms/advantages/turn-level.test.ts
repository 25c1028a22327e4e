import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { assertAllClose, assertClose } from '../gradient-check.ts';
import { turnLevelAdvantages, type CreditEpisode } from './turn-level.ts';

const episode = (groupId: string, rewards: number[], values?: number[]): CreditEpisode => ({
  groupId,
  turns: rewards.map((reward, k) => (values ? { reward, value: at(values, k) } : { reward })),
});

// Group "g": episode 0 returns 0 + 1 = 1 over two turns, episode 1 returns 0 in one turn →
// mean 1/2, unbiased std sqrt(1/2); A = ±(1/2)/(sqrt(1/2) + 1e-6) ≈ ±0.7071058 on every turn.
const twoEpisodes = [episode('g', [0, 1]), episode('g', [0])];
const grpoA = 0.5 / (Math.sqrt(0.5) + 1e-6);

describe('turnLevelAdvantages', () => {
  it('grpo: the episode return normalised in its group, the same on every turn of the episode', () => {
    const { advantages, returns, rewardKl } = turnLevelAdvantages(twoEpisodes, { estimator: 'grpo' });
    assertAllClose(at(advantages, 0), [grpoA, grpoA]);
    assertAllClose(at(advantages, 1), [-grpoA]);
    assert.equal(returns, undefined);
    assert.equal(rewardKl, undefined);
  });

  it('grpo-no-std: return minus the group mean (Dr. GRPO)', () => {
    const { advantages } = turnLevelAdvantages(twoEpisodes, { estimator: 'grpo-no-std' });
    assertAllClose(at(advantages, 0), [0.5, 0.5]);
    assertAllClose(at(advantages, 1), [-0.5]);
  });

  it("turn weighting 'episode' scales an episode by K̄/K (K̄ = 3/2 here), 'turn' leaves it", () => {
    const { advantages } = turnLevelAdvantages(twoEpisodes, { estimator: 'grpo', turnWeighting: 'episode' });
    assertAllClose(at(advantages, 0), [0.75 * grpoA, 0.75 * grpoA]); // K = 2: weight 1.5 / 2
    assertAllClose(at(advantages, 1), [-1.5 * grpoA]); // K = 1: weight 1.5
    // Summed over its turns, every episode now weighs |A|·K̄ = 1.5·|A|.
    const turnWeighted = turnLevelAdvantages(twoEpisodes, { estimator: 'grpo', turnWeighting: 'turn' });
    assertAllClose(at(turnWeighted.advantages, 0), [grpoA, grpoA]);
  });

  it('rloo: the return minus the mean of the other episodes of the group', () => {
    // Returns 1, 0, 0.5 → 1 − 0.25, 0 − 0.75, 0.5 − 0.5; a group of one keeps its return.
    const { advantages } = turnLevelAdvantages(
      [episode('g', [1]), episode('g', [0, 0]), episode('g', [0.5]), episode('alone', [2])],
      { estimator: 'rloo' },
    );
    assertAllClose(at(advantages, 0), [0.75]);
    assertAllClose(at(advantages, 1), [-0.75, -0.75]);
    assertAllClose(at(advantages, 2), [0]);
    assertAllClose(at(advantages, 3), [2]);
  });

  it('reinforce++: discounted over turns (γ per turn), then whitened over every turn of the batch', () => {
    // G = [0 + 0.5·0.5, 0 + 0.5·1, 1] = [0.25, 0.5, 1]; mean 7/12, unbiased variance 0.1458333.
    const { advantages } = turnLevelAdvantages([episode('g', [0, 0, 1])], { estimator: 'reinforce++', gamma: 0.5 });
    assertAllClose(at(advantages, 0), [-0.8728715310169463, -0.21821788275423665, 1.0910894137711826]);
  });

  it('gae: over turns with the value at each turn, V after the last turn 0 (a truncated episode is not bootstrapped)', () => {
    // Episode 0: γ 0.9, λ 0.5, r = [0, 1], V = [0.5, 0.8]:
    //   δ₁ = 1 − 0.8 = 0.2, A₁ = 0.2, R₁ = 1;  δ₀ = 0.9·0.8 − 0.5 = 0.22, A₀ = 0.22 + 0.45·0.2 = 0.31, R₀ = 0.81.
    // Episode 1 (cut by the turn limit): r = [0], V = [0.6] → A = −0.6, R = 0.
    // Whitened over the 3 turns [0.31, 0.2, −0.6]: mean −0.03, unbiased variance 0.2467.
    const { advantages, returns } = turnLevelAdvantages([episode('g', [0, 1], [0.5, 0.8]), episode('g', [0], [0.6])], {
      estimator: 'gae',
      gamma: 0.9,
      lambda: 0.5,
    });
    assertAllClose(at(returns!, 0), [0.81, 1]);
    assertAllClose(at(returns!, 1), [0]);
    assertAllClose(at(advantages, 0), [0.6845329117822757, 0.4630663814997748]);
    assertAllClose(at(advantages, 1), [-1.1475992932820505]);
  });

  it('gae without a value on a turn is refused, naming the turn', () => {
    assert.throws(
      () => turnLevelAdvantages([episode('g', [0, 1], [0.5, 0.8]), episode('g', [1])], { estimator: 'gae' }),
      (e: unknown) => e instanceof InvalidArgumentError && /episode 1 turn 0/.test(e.message),
    );
  });

  it('KL in the reward: r − coef·Σ kl over the turn’s generated tokens (k1 and k2), and the mean per-token KL', () => {
    // Generated tokens 1 and 2: logp − ref = 0.5 and −1. k1: Σ = −0.5 (mean −0.25); k2: Σ = ½(0.25 + 1) = 0.625.
    const kl = { logprobs: [0, -1, -2], refLogprobs: [0, -1.5, -1], lossMask: [0, 1, 1] };
    const shapedEpisode: CreditEpisode = { groupId: 'alone', turns: [{ reward: 1, kl }] };
    const k1 = turnLevelAdvantages([shapedEpisode], { estimator: 'rloo', klInReward: { estimator: 'k1', coef: 0.1 } });
    assertAllClose(at(k1.advantages, 0), [1 + 0.05]); // rloo keeps a lone episode's return
    assertClose(k1.rewardKl!, -0.25);
    const k2 = turnLevelAdvantages([shapedEpisode], { estimator: 'rloo', klInReward: { estimator: 'k2', coef: 0.1 } });
    assertAllClose(at(k2.advantages, 0), [1 - 0.0625]);
    assertClose(k2.rewardKl!, 0.3125);
    // KL off: the same turn keeps its reward.
    assertAllClose(at(turnLevelAdvantages([shapedEpisode], { estimator: 'rloo' }).advantages, 0), [1]);
  });
});
