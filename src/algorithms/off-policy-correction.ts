/**
 * Off-policy corrections between the behaviour policy that sampled a trajectory (the sampler's
 * log-probs, `trajectory.logprobs`: another engine, or an older policy version) and the trainer's
 * own log-probs of the same tokens under the weights at the start of the update (π_old, the
 * proximal policy of decoupled PPO). With the per-token log ratio δ_t = log π_old − log π_behav,
 * clamped to ±20 before exp (verl's SAFETY_BOUND), and ρ_t = exp(δ_t):
 *
 *   tis           w_t = min(ρ_t, C)                                     mask unchanged
 *   mis-token     w_t = ρ_t,  mask_t ← 0 where ρ_t ∉ [low, high]
 *   mis-sequence  w_t = ρ_i,  every token of sequence i masked when ρ_i ∉ [low, high], with
 *                 ρ_i = exp(Σ_t m_t·δ_t)           (sequenceRatio 'product', verl level "sequence")
 *                 ρ_i = exp(Σ_t m_t·δ_t / Σ_t m_t) (sequenceRatio 'geometric', verl level "geometric")
 *
 * exactly as verl `compute_rollout_importance_weights` (verl/trainer/ppo/mismatch_helper.py:
 * rollout_is_mode "truncate" clamps at the upper threshold only; "mask" rejects outside [lower,
 * upper] through the response mask and keeps the true ratio as the weight), TIS as in F. Yao et
 * al., "Your Efficient RL Framework Secretly Brings You Off-Policy RL Training" (2025; C = 2) and
 * TRL `vllm_importance_sampling_mode="token_truncate"`. The weight multiplies the per-token
 * policy-gradient loss as a constant (`weightPolicyLoss`: L = Σ agg_w·w·ℓ, dL/dlogp = agg_w·w·dℓ/dlogp),
 * and the masked tokens leave the loss mask of the whole batch, so they leave the aggregation's
 * denominators too (verl: `modified_response_mask`). Metrics (TRL `sampling_logp_difference`):
 * max and mean |δ| over the policy tokens, the share of policy tokens truncated (tis) or masked (mis-*),
 * and the mean applied weight over the tokens kept.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { aggregate, type AggregationOptions } from './aggregation.ts';
import type { PolicyLossResult } from './losses/ppo-clip.ts';
import { assertSameShape, type Sequences } from './sequences.ts';

export const offPolicyCorrectionModes = ['auto', 'off', 'tis', 'mis-token', 'mis-sequence'] as const;
export type OffPolicyCorrectionMode = (typeof offPolicyCorrectionModes)[number];
/** The corrections themselves: a mode once 'auto' and 'off' are resolved. */
export type CorrectionMethod = Exclude<OffPolicyCorrectionMode, 'auto' | 'off'>;

export const offPolicyCorrectionSchema = z
  .object({
    /**
     * 'auto' (default): off while sampler and trainer are the same engine at the same policy version,
     * tis when they differ (a backend with `samplerMatchesTrainer: false`, or a stale trajectory);
     * 'off': never; 'tis', 'mis-token', 'mis-sequence': always (one extra scoring pass per update).
     */
    mode: z.enum(offPolicyCorrectionModes).default('auto'),
    /** TIS cap C: w = min(ρ, C) (verl `rollout_is_threshold`, the TIS blog's C = 2; TRL's default is 3). */
    cap: z.number().positive().default(2),
    /** MIS lower bound: a token (or sequence) with ρ below it leaves the loss (verl default 1/upper = 0.5). */
    low: z.number().min(0).default(0.5),
    /** MIS upper bound: a token (or sequence) with ρ above it leaves the loss (verl `rollout_is_threshold` 2). */
    high: z.number().positive().default(2),
    /**
     * mis-sequence's ratio: 'product' = π_old(y)/π_behav(y), unbiased (verl "sequence", TRL
     * "sequence_mask"); 'geometric' = its per-token geometric mean, length-robust but needs bounds
     * near 1 (verl suggests 1.0002–1.001 for engine mismatch).
     */
    sequenceRatio: z.enum(['product', 'geometric']).default('product'),
  })
  .refine((c) => c.low < c.high, { message: 'offPolicyCorrection.low must be below offPolicyCorrection.high' });
export type OffPolicyCorrectionConfig = z.infer<typeof offPolicyCorrectionSchema>;
/**
 * The trainer's config key `offPolicyCorrection` (src/train/rl.ts): the object, or a mode alone
 * (`--off-policy-correction tis` on the command line) with the other fields at their defaults.
 */
export const offPolicyCorrectionField = z
  .union([
    offPolicyCorrectionSchema,
    z.enum(offPolicyCorrectionModes).transform((mode) => offPolicyCorrectionSchema.parse({ mode })),
  ])
  .default(() => offPolicyCorrectionSchema.parse({}))
  .describe(
    "off-policy correction between the sampler's and the trainer's log-probs: a mode (auto | off | tis | mis-token | mis-sequence) or { mode, cap, low, high, sequenceRatio }",
  );
export type OffPolicyCorrectionInput = z.input<typeof offPolicyCorrectionSchema>;

/**
 * The correction an update applies, or null for none. 'auto' corrects (TIS) when the sampler is
 * another engine than the trainer (`samplerMatchesTrainer === false`; absent means the same) or
 * when the trajectories are `staleness` > 0 policy versions old (the asynchronous loop).
 */
export function correctionActive(
  correction: Pick<OffPolicyCorrectionConfig, 'mode'>,
  policy: { readonly samplerMatchesTrainer?: boolean },
  staleness = 0,
): CorrectionMethod | null {
  if (correction.mode === 'off') return null;
  if (correction.mode !== 'auto') return correction.mode;
  return policy.samplerMatchesTrainer === false || staleness > 0 ? 'tis' : null;
}

export interface OffPolicyMetrics {
  /** max |log π_old − log π_behav| over the policy tokens. */
  maxAbsLogprobDelta: number;
  /** mean |log π_old − log π_behav| over the policy tokens. */
  meanAbsLogprobDelta: number;
  /** Share of policy tokens whose weight was truncated at the cap (tis). */
  truncatedFraction: number;
  /** Share of policy tokens taken out of the loss (mis-token, mis-sequence). */
  maskedFraction: number;
  /** Mean applied weight over the tokens kept in the loss. */
  weightMean: number;
}

export interface OffPolicyWeights {
  /** Per-token weight of the policy-gradient loss (a constant); 0 off the loss mask. */
  weights: Float64Array[];
  /** The loss mask with the MIS rejections taken out (the input mask under tis). */
  lossMask: Float64Array[];
  metrics: OffPolicyMetrics;
}

export interface OffPolicyWeightOptions extends Omit<OffPolicyCorrectionConfig, 'mode'> {
  method: CorrectionMethod;
  /** log π_behav: the sampler's log-probs of the tokens. */
  behaviourLogprobs: Sequences;
  /** log π_old: the trainer's log-probs of the same tokens at the start of the update. */
  trainerLogprobs: Sequences;
  lossMask: Sequences;
}

const safetyBound = 20;

export function offPolicyWeights(options: OffPolicyWeightOptions): OffPolicyWeights {
  const { method, behaviourLogprobs, trainerLogprobs, lossMask, cap, low, high } = options;
  assertSameShape('behaviourLogprobs', behaviourLogprobs, lossMask);
  assertSameShape('trainerLogprobs', trainerLogprobs, lossMask);
  let tokens = 0;
  let deltaMax = 0;
  let deltaSum = 0;
  let truncated = 0;
  let masked = 0;
  let keptTokens = 0;
  let weightSum = 0;
  const weights: Float64Array[] = [];
  const masks: Float64Array[] = [];
  for (const [i, mask] of lossMask.entries()) {
    const deltas = logRatios(at(behaviourLogprobs, i), at(trainerLogprobs, i), mask, i);
    const sequenceRatio = method === 'mis-sequence' ? sequenceWeight(deltas, mask, options.sequenceRatio) : NaN;
    const sequenceKept = sequenceRatio >= low && sequenceRatio <= high;
    const weight = new Float64Array(mask.length);
    const kept = new Float64Array(mask.length);
    for (let t = 0; t < mask.length; t++) {
      const m = at(mask, t);
      if (!(m > 0)) continue;
      const delta = at(deltas, t);
      const ratio = Math.exp(Math.min(safetyBound, Math.max(-safetyBound, delta)));
      tokens += m;
      deltaMax = Math.max(deltaMax, Math.abs(delta));
      deltaSum += m * Math.abs(delta);
      let keep = true;
      if (method === 'tis') {
        weight[t] = Math.min(ratio, cap);
        if (ratio > cap) truncated += m;
      } else if (method === 'mis-token') {
        weight[t] = ratio;
        keep = ratio >= low && ratio <= high;
      } else {
        weight[t] = sequenceRatio;
        keep = sequenceKept;
      }
      if (!keep) {
        masked += m;
        continue;
      }
      kept[t] = m;
      keptTokens += m;
      weightSum += m * at(weight, t);
    }
    weights.push(weight);
    masks.push(kept);
  }
  const per = (x: number, n: number): number => (n > 0 ? x / n : 0);
  return {
    weights,
    lossMask: masks,
    metrics: {
      maxAbsLogprobDelta: deltaMax,
      meanAbsLogprobDelta: per(deltaSum, tokens),
      truncatedFraction: per(truncated, tokens),
      maskedFraction: per(masked, tokens),
      weightMean: per(weightSum, keptTokens),
    },
  };
}

/** δ_t = log π_old − log π_behav on the policy tokens (0 elsewhere); a non-finite log-prob on a policy token is refused. */
function logRatios(
  behaviour: ArrayLike<number>,
  trainer: ArrayLike<number>,
  mask: ArrayLike<number>,
  sequence: number,
) {
  const deltas = new Float64Array(mask.length);
  for (let t = 0; t < mask.length; t++) {
    if (!(at(mask, t) > 0)) continue;
    const delta = at(trainer, t) - at(behaviour, t);
    if (!Number.isFinite(delta)) {
      throw new InvalidArgumentError(
        `off-policy correction: sequence ${sequence} token ${t} has log-probs behaviour ${at(behaviour, t)}, trainer ${at(trainer, t)}; both must be finite on a policy token`,
        { sequence, token: t, behaviour: at(behaviour, t), trainer: at(trainer, t) },
      );
    }
    deltas[t] = delta;
  }
  return deltas;
}

/** ρ_i of one sequence: exp of the masked sum (product) or mean (geometric) of δ, clamped to ±20 first. */
function sequenceWeight(deltas: Float64Array, mask: ArrayLike<number>, kind: 'product' | 'geometric'): number {
  let sum = 0;
  let count = 0;
  for (let t = 0; t < mask.length; t++) {
    sum += at(mask, t) * at(deltas, t);
    count += at(mask, t);
  }
  const logRatio = kind === 'product' ? sum : sum / Math.max(1, count);
  return Math.exp(Math.min(safetyBound, Math.max(-safetyBound, logRatio)));
}

/**
 * The policy-gradient term with each token's loss multiplied by the constant weight w:
 * L = Σ agg_w·w·ℓ over `lossMask` (the corrected mask the term was computed on), dL/dlogp = w·(its gradient).
 */
export function weightPolicyLoss(
  result: PolicyLossResult,
  weights: Sequences,
  lossMask: Sequences,
  aggregation: AggregationOptions,
): PolicyLossResult {
  assertSameShape('importanceWeights', weights, lossMask);
  const scale = (rows: readonly Float64Array[]) => rows.map((row, i) => row.map((x, t) => x * at(at(weights, i), t)));
  const tokenLosses = scale(result.tokenLosses);
  return {
    ...result,
    loss: aggregate(tokenLosses, lossMask, aggregation).value,
    gradLogprobs: scale(result.gradLogprobs),
    tokenLosses,
  };
}
