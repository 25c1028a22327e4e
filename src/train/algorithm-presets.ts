/**
 * The named RL algorithms as presets over the pure functions in src/algorithms:
 *
 * | name        | advantage                         | policy loss                | KL to reference      | other |
 * |-------------|-----------------------------------|----------------------------|----------------------|-------|
 * | grpo        | group-normalised outcome (std)    | PPO-clip 0.2/0.2, token-mean | k3 in the loss, 0.001 | DeepSeekMath (2402.03300) |
 * | dr-grpo     | group mean only (no std)          | PPO-clip, seq-mean-token-sum-norm ÷ the generation budget | none | Dr. GRPO (2503.20783) |
 * | dapo        | group-normalised outcome          | PPO-clip 0.2/0.28 (clip-higher), dual clip c = 10, token-mean | none | dynamic sampling with refill; DAPO (2503.14476) |
 * | gspo        | group-normalised outcome          | GSPO sequence ratio, clip 3e-4/4e-4 | none        | GSPO (2507.18071) |
 * | rloo        | leave-one-out baseline            | PPO-clip, token-mean       | k1 in the reward, 0.001 | RLOO (2402.14740) |
 * | reinforce++ | discounted return, batch-whitened | PPO-clip, token-mean       | k2 in the reward, 0.001 | REINFORCE++ (2501.03262) |
 * | ppo         | GAE(γ, λ) on the value head       | PPO-clip + clipped value loss | k1 in the reward, 0.001 | PPO (1707.06347) |
 *
 * Dual clip is c = 3 (verl's default) except DAPO's 10 (verl's DAPO recipe, `clip_ratio_c`). The
 * seq-mean-token-sum-norm divisor is a constant the trainer sets (`lossScaleFactor`, default the
 * generation budget). Every field can still be overridden from the trainer's config.
 */
import { z } from 'zod';
import type { RlLossConfigInput } from '../algorithms/index.ts';
import type { AdvantageEstimator, KlEstimator } from '../algorithms/index.ts';

export const algorithmNames = ['grpo', 'dr-grpo', 'dapo', 'gspo', 'rloo', 'reinforce++', 'ppo'] as const;
export type AlgorithmName = (typeof algorithmNames)[number];
export const algorithmNameSchema = z.enum(algorithmNames);

export type { AdvantageEstimator };

export interface AlgorithmPreset {
  advantage: AdvantageEstimator;
  loss: RlLossConfigInput;
  /** KL to the reference subtracted from the token rewards (estimator, coefficient); null = off. */
  klInReward: { estimator: KlEstimator; coef: number } | null;
  /** Drop groups whose rewards do not vary and refill the batch with fresh tasks (DAPO dynamic sampling; src/train/rl-collect.ts). */
  dropUniformGroups: boolean;
  /** Needs the model's value head (critic). */
  valueHead: boolean;
}

export const algorithmPresets: Record<AlgorithmName, AlgorithmPreset> = {
  grpo: {
    advantage: 'grpo',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean', useKlLoss: true, klLossCoef: 0.001, klLossType: 'k3' },
    klInReward: null,
    dropUniformGroups: false,
    valueHead: false,
  },
  'dr-grpo': {
    advantage: 'grpo-no-std',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'seq-mean-token-sum-norm', useKlLoss: false },
    klInReward: null,
    dropUniformGroups: false,
    valueHead: false,
  },
  dapo: {
    advantage: 'grpo',
    loss: { policyLoss: 'ppo-clip', clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 10, lossAggMode: 'token-mean', useKlLoss: false },
    klInReward: null,
    dropUniformGroups: true,
    valueHead: false,
  },
  gspo: {
    advantage: 'grpo',
    loss: { policyLoss: 'gspo', clipRatioLow: 3e-4, clipRatioHigh: 4e-4, lossAggMode: 'seq-mean-token-mean', useKlLoss: false },
    klInReward: null,
    dropUniformGroups: false,
    valueHead: false,
  },
  rloo: {
    advantage: 'rloo',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean', useKlLoss: false },
    klInReward: { estimator: 'k1', coef: 0.001 },
    dropUniformGroups: false,
    valueHead: false,
  },
  'reinforce++': {
    advantage: 'reinforce++',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean', useKlLoss: false },
    klInReward: { estimator: 'k2', coef: 0.001 },
    dropUniformGroups: false,
    valueHead: false,
  },
  ppo: {
    advantage: 'gae',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean', useKlLoss: false, vfCoef: 0.5 },
    klInReward: { estimator: 'k1', coef: 0.001 },
    dropUniformGroups: false,
    valueHead: true,
  },
};
