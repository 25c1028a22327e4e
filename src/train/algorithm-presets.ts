/**
 * The named RL algorithms as presets over the pure functions in src/algorithms:
 *
 * | name        | advantage                         | policy loss                | KL to reference      | other |
 * |-------------|-----------------------------------|----------------------------|----------------------|-------|
 * | grpo        | group-normalised outcome (std)    | PPO-clip 0.2/0.2, token-mean | k3 in the loss, 0.001 | DeepSeekMath (2402.03300) |
 * | dr-grpo     | group mean only (no std)          | PPO-clip, seq-mean-token-sum-norm ÷ the generation budget | k3 in the loss, 0 (off) | Dr. GRPO (2503.20783) |
 * | dapo        | group-normalised outcome          | PPO-clip 0.2/0.28 (clip-higher), dual clip c = 10, token-mean | k3 in the loss, 0 (off) | dynamic sampling with refill; DAPO (2503.14476) |
 * | gspo        | group-normalised outcome          | GSPO sequence ratio, clip 3e-4/4e-4 | k3 in the loss, 0 (off) | GSPO (2507.18071) |
 * | cispo       | group-normalised outcome          | CISPO: sg(clip(r, 0, 5))·A·log π, token-mean | k3 in the loss, 0 (off) | MiniMax-M1 (2506.13585) |
 * | rloo        | leave-one-out baseline            | PPO-clip, token-mean       | k1 in the reward, 0.001 | RLOO (2402.14740) |
 * | reinforce++ | discounted return, batch-whitened | PPO-clip, token-mean       | k2 in the reward, 0.001 | REINFORCE++ (2501.03262) |
 * | ppo         | GAE(γ, λ) on the value head       | PPO-clip + clipped value loss | k1 in the reward, 0.001 | PPO (1707.06347) |
 *
 * KL to the reference sits in one place per preset (`kl.placement`): a term of the loss (verl
 * `use_kl_loss`) or a penalty on the token rewards (verl `use_kl_in_reward`). `kl.coef` is its
 * weight, and a weight of 0 is no KL (no reference needed): the presets the papers run without KL
 * say where it would go at coefficient 0. The trainer's `klCoef` (`--kl-coef`) is that one
 * coefficient and nothing else: it replaces `kl.coef`, placement and estimator stay the preset's.
 *
 * CISPO's ε_low 1 (no lower bound on the IS weight, as MiniMax-M1 runs it) and ε_high 4 (the weight
 * capped at 5) are ART's defaults (`ppo: false`: epsilon 1.0, epsilon_high 4.0); TRL's recommended
 * `epsilon_high` 5.0 for `loss_type="cispo"` is the same cap, SkyRL's `cispo_eps_clip_high` 5 a cap of 6.
 *
 * Dual clip is c = 3 (verl's default) except DAPO's 10 (verl's DAPO recipe, `clip_ratio_c`). The
 * seq-mean-token-sum-norm divisor is a constant the trainer sets (`lossScaleFactor`, default the
 * generation budget). Every field can still be overridden from the trainer's config.
 */
import { z } from 'zod';
import type { AdvantageEstimator, KlEstimator, RlLossConfigInput } from '../algorithms/index.ts';

export const algorithmNames = ['grpo', 'dr-grpo', 'dapo', 'gspo', 'cispo', 'rloo', 'reinforce++', 'ppo'] as const;
export type AlgorithmName = (typeof algorithmNames)[number];
export const algorithmNameSchema = z.enum(algorithmNames);

export type { AdvantageEstimator };

/** Where KL to the reference policy goes: a term of the loss, or a penalty on the token rewards. */
export type KlPlacement = 'loss' | 'reward';

export interface KlToReference {
  placement: KlPlacement;
  estimator: KlEstimator;
  /** The weight of the KL term; 0 = no KL (and no reference needed). */
  coef: number;
}

/** The loss config's KL fields come from the preset's `kl` (`lossConfig`), never set by hand. */
export type PresetLossConfig = Omit<RlLossConfigInput, 'useKlLoss' | 'klLossCoef' | 'klLossType'>;

export interface AlgorithmPreset {
  advantage: AdvantageEstimator;
  loss: PresetLossConfig;
  /** KL to the reference policy (needs `reference` when `coef` > 0): where, which estimator, what weight. */
  kl: KlToReference;
  /** Drop groups whose rewards do not vary and refill the batch with fresh tasks (DAPO dynamic sampling; src/train/rl-collect.ts). */
  dropUniformGroups: boolean;
  /** Needs the model's value head (critic). */
  valueHead: boolean;
}

export const algorithmPresets: Record<AlgorithmName, AlgorithmPreset> = {
  grpo: {
    advantage: 'grpo',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean' },
    kl: { placement: 'loss', estimator: 'k3', coef: 0.001 },
    dropUniformGroups: false,
    valueHead: false,
  },
  'dr-grpo': {
    advantage: 'grpo-no-std',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'seq-mean-token-sum-norm' },
    kl: { placement: 'loss', estimator: 'k3', coef: 0 },
    dropUniformGroups: false,
    valueHead: false,
  },
  dapo: {
    advantage: 'grpo',
    loss: { policyLoss: 'ppo-clip', clipRatioLow: 0.2, clipRatioHigh: 0.28, clipRatioC: 10, lossAggMode: 'token-mean' },
    kl: { placement: 'loss', estimator: 'k3', coef: 0 },
    dropUniformGroups: true,
    valueHead: false,
  },
  gspo: {
    advantage: 'grpo',
    loss: { policyLoss: 'gspo', clipRatioLow: 3e-4, clipRatioHigh: 4e-4, lossAggMode: 'seq-mean-token-mean' },
    kl: { placement: 'loss', estimator: 'k3', coef: 0 },
    dropUniformGroups: false,
    valueHead: false,
  },
  cispo: {
    advantage: 'grpo',
    loss: { policyLoss: 'cispo', clipRatioLow: 1, clipRatioHigh: 4, lossAggMode: 'token-mean' },
    kl: { placement: 'loss', estimator: 'k3', coef: 0 },
    dropUniformGroups: false,
    valueHead: false,
  },
  rloo: {
    advantage: 'rloo',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean' },
    kl: { placement: 'reward', estimator: 'k1', coef: 0.001 },
    dropUniformGroups: false,
    valueHead: false,
  },
  'reinforce++': {
    advantage: 'reinforce++',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean' },
    kl: { placement: 'reward', estimator: 'k2', coef: 0.001 },
    dropUniformGroups: false,
    valueHead: false,
  },
  ppo: {
    advantage: 'gae',
    loss: { policyLoss: 'ppo-clip', lossAggMode: 'token-mean', vfCoef: 0.5 },
    kl: { placement: 'reward', estimator: 'k1', coef: 0.001 },
    dropUniformGroups: false,
    valueHead: true,
  },
};

/** The preset's KL to the reference when it is on (coefficient above 0), else null: only then is a reference needed. */
export function activeKl(preset: Pick<AlgorithmPreset, 'kl'>): KlToReference | null {
  return preset.kl.coef > 0 ? preset.kl : null;
}

/** The preset's loss config, with the KL term when KL is on and placed in the loss. */
export function lossConfig(preset: Pick<AlgorithmPreset, 'loss' | 'kl'>): RlLossConfigInput {
  const kl = activeKl(preset);
  if (kl?.placement !== 'loss') return { ...preset.loss, useKlLoss: false };
  return { ...preset.loss, useKlLoss: true, klLossCoef: kl.coef, klLossType: kl.estimator };
}

/** KL in the reward (estimator, coefficient) when KL is on and placed there, else null. */
export function klInRewardOf(preset: Pick<AlgorithmPreset, 'kl'>): { estimator: KlEstimator; coef: number } | null {
  const kl = activeKl(preset);
  return kl?.placement === 'reward' ? { estimator: kl.estimator, coef: kl.coef } : null;
}
