/**
 * From scored samples to per-token advantages (and returns for the critic), dispatching on the
 * preset's estimator. Samples are token sequences with a loss mask, per-token rewards (each turn's
 * reward on its last generated token) and a group key (same task → same group).
 */
import {
  gae,
  grpoAdvantages,
  klInReward,
  reinforcePlusPlusAdvantages,
  rlooAdvantages,
  whiten,
} from '../algorithms/index.ts';
import { klInRewardOf, type AlgorithmPreset } from './algorithm-presets.ts';
import { at } from '../core/indexing.ts';

export interface ScoredSample {
  lossMask: ArrayLike<number>;
  tokenRewards: ArrayLike<number>;
  groupId: string;
  oldLogprobs: ArrayLike<number>;
  refLogprobs?: ArrayLike<number>;
  values?: ArrayLike<number>;
}

export interface AdvantageOptions {
  gamma: number;
  lambda: number;
}

export interface AdvantageResult {
  advantages: Float64Array[];
  returns?: Float64Array[];
  /** Mean per-token KL (old vs reference) when KL shapes the reward. */
  rewardKl?: number;
}

export function computeAdvantages(
  samples: readonly ScoredSample[],
  preset: AlgorithmPreset,
  options: AdvantageOptions,
): AdvantageResult {
  const lossMask = samples.map((s) => s.lossMask);
  let tokenRewards: ArrayLike<number>[] = samples.map((s) => s.tokenRewards);
  let rewardKl: number | undefined;
  const rewardKlTerm = klInRewardOf(preset);
  if (rewardKlTerm !== null && samples.every((s) => s.refLogprobs !== undefined)) {
    const shaped = klInReward({
      tokenRewards,
      oldLogprobs: samples.map((s) => s.oldLogprobs),
      refLogprobs: samples.map((s) => s.refLogprobs!),
      lossMask,
      coef: rewardKlTerm.coef,
      estimator: rewardKlTerm.estimator,
    });
    tokenRewards = shaped.tokenRewards;
    rewardKl = shaped.kl;
  }
  const groupIds = samples.map((s) => s.groupId);
  switch (preset.advantage) {
    case 'grpo':
      return { advantages: grpoAdvantages({ tokenRewards, lossMask, groupIds }).advantages, rewardKl };
    case 'grpo-no-std':
      return {
        advantages: grpoAdvantages({ tokenRewards, lossMask, groupIds, normalizeByStd: false }).advantages,
        rewardKl,
      };
    case 'rloo':
      return { advantages: rlooAdvantages({ tokenRewards, lossMask, groupIds }).advantages, rewardKl };
    case 'reinforce++':
      return {
        advantages: reinforcePlusPlusAdvantages({ tokenRewards, lossMask, gamma: options.gamma }).advantages,
        rewardKl,
      };
    case 'gae': {
      const advantages: Float64Array[] = [];
      const returns: Float64Array[] = [];
      samples.forEach((sample, i) => {
        const out = gae({
          tokenRewards: at(tokenRewards, i, 'token rewards'),
          values: sample.values!,
          lossMask: sample.lossMask,
          gamma: options.gamma,
          lambda: options.lambda,
        });
        advantages.push(out.advantages);
        returns.push(out.returns);
      });
      // verl whitens GAE advantages over the batch's policy tokens.
      return { advantages: whiten(advantages, lossMask), returns, rewardKl };
    }
  }
}
