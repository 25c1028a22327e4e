/**
 * The composite RL loss the trainer calls, as a `TokenLoss` (src/core/loss.ts). It adds, as verl's
 * actor (`dp_actor.update_policy`) and critic do:
 *   L = L_policy                                  ppo-clip (./losses/ppo-clip.ts), gspo (./losses/gspo.ts) or cispo (./losses/cispo.ts),
 *                                                 each token's term × an off-policy weight when `importanceWeights` are given (./off-policy-correction.ts)
 *     − entropyCoef · agg(H)                      (./losses/entropy.ts)
 *     + klLossCoef · agg(kl(logp, ref))           when useKlLoss (./kl.ts)
 *     + vfCoef · ½·agg(max((V−R)², (V_c−R)²))     when `returns` are given (./losses/value.ts)
 * every term aggregated with `lossAggMode` (./aggregation.ts) — except GSPO's policy term, which
 * verl always aggregates seq-mean-token-mean. `rlLossTerms` is the same computation on plain
 * arrays in float64 (what the tests differentiate); `rlLoss` wraps it for the model.
 * Also here: `dpoLoss` and `sftLoss`, the TokenLoss wrappers of ./losses/dpo.ts and ./losses/sft.ts.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { TokenLoss, TokenLossInput, TokenLossOutput } from '../core/loss.ts';
import { lossAggModes } from './aggregation.ts';
import { klEstimators, klPenaltyLoss } from './kl.ts';
import { dpoPairLoss, type DpoOptions } from './losses/dpo.ts';
import { cispoLoss } from './losses/cispo.ts';
import { entropyBonus } from './losses/entropy.ts';
import { gspoLoss } from './losses/gspo.ts';
import { type PolicyLossResult, ppoClipLoss } from './losses/ppo-clip.ts';
import { negativeLogLikelihood } from './losses/sft.ts';
import { valueLoss } from './losses/value.ts';
import { weightPolicyLoss } from './off-policy-correction.ts';
import { serverLossSpec } from './server-loss-spec.ts';
import { assertSameShape, toFloat32, type Sequences } from './sequences.ts';

export const policyLossNames = ['ppo-clip', 'gspo', 'cispo'] as const;

export const rlLossConfigSchema = z.object({
  /** Policy loss: ppo-clip (verl `policy_loss.loss_mode=vanilla`), gspo (sequence-level ratio) or cispo (clipped, detached IS weight; MiniMax-M1). */
  policyLoss: z.enum(policyLossNames).default('ppo-clip'),
  /** ε_low: the ratio is clipped below at 1 − ε_low (verl `clip_ratio_low`; CISPO: 1, no lower bound). */
  clipRatioLow: z.number().min(0).max(1).default(0.2),
  /** ε_high: the ratio is clipped above at 1 + ε_high (verl `clip_ratio_high`; DAPO clip-higher uses 0.28; CISPO's preset 4). */
  clipRatioHigh: z.number().min(0).default(0.2),
  /** Dual-clip bound c for negative advantages (verl `clip_ratio_c`); null disables it. PPO-clip only. */
  clipRatioC: z.number().gt(1).nullable().default(3),
  /** How per-token losses become one scalar (verl `loss_agg_mode`). GSPO's policy term always uses seq-mean-token-mean, as verl. */
  lossAggMode: z.enum(lossAggModes).default('token-mean'),
  /** Constant divisor of seq-mean-token-sum-norm (Dr. GRPO: the generation budget); required by that mode, ignored by the others. */
  lossScaleFactor: z.number().positive().nullable().default(null),
  /** Weight of the value loss, used when `returns` are given (verl trains a separate critic; 0.5 is CleanRL's). */
  vfCoef: z.number().min(0).default(0.5),
  /**
   * The value loss trains only the value head (a stop-gradient before it), not the trunk it shares
   * with the policy. verl's critic is a separate model, so its loss never moves the actor; with one
   * shared trunk this is the way to keep that separation.
   */
  detachValueHead: z.boolean().default(false),
  /** Value clip range ε_v (verl `critic.cliprange_value`). */
  clipRangeValue: z.number().min(0).default(0.5),
  /** Weight of the entropy bonus (verl `entropy_coeff`); needs entropies from the model when non-zero. */
  entropyCoef: z.number().default(0),
  /** Add a KL-to-reference term to the loss (verl `use_kl_loss`); needs `refLogprobs`. */
  useKlLoss: z.boolean().default(false),
  /** Weight of the KL term (verl `kl_loss_coef`). */
  klLossCoef: z.number().min(0).default(0.001),
  /** KL estimator of the KL term (verl `kl_loss_type`, default low_var_kl = k3). */
  klLossType: z.enum(klEstimators).default('k3'),
});

export type RlLossConfig = z.infer<typeof rlLossConfigSchema>;
export type RlLossConfigInput = z.input<typeof rlLossConfigSchema>;

/** What the batch fixes: everything except the current log-probs, values and entropies. */
export interface RlBatch {
  oldLogprobs: Sequences;
  /** Reference-policy log-probs; required when config.useKlLoss. */
  refLogprobs?: Sequences;
  advantages: Sequences;
  lossMask: Sequences;
  /** Value targets; giving them (with oldValues) turns on the value loss. */
  returns?: Sequences;
  /** Values at sampling time, the centre of the value clip. */
  oldValues?: Sequences;
  /** Off-policy weights w (π_old/π_behav, truncated or masked): each token's policy-gradient loss × w, a constant. */
  importanceWeights?: Sequences;
}

export interface RlCurrent {
  logprobs: Sequences;
  values?: Sequences;
  entropies?: Sequences;
}

export interface RlLossTerms {
  loss: number;
  gradLogprobs: Float64Array[];
  gradValues?: Float64Array[];
  gradEntropies?: Float64Array[];
  metrics: Record<string, number>;
}

/** The policy-gradient term the config names, each token's loss weighted when the batch has importance weights. */
function policyTerm(batch: RlBatch, current: RlCurrent, config: RlLossConfig): PolicyLossResult {
  const unweighted = unweightedPolicyTerm(batch, current, config);
  if (!batch.importanceWeights) return unweighted;
  const mode = config.policyLoss === 'gspo' ? 'seq-mean-token-mean' : config.lossAggMode;
  return weightPolicyLoss(unweighted, batch.importanceWeights, batch.lossMask, {
    mode,
    lossScaleFactor: config.lossScaleFactor,
  });
}

/** GSPO's sequence-level ratio, CISPO's clipped detached token ratio, or PPO's clipped token ratio. */
function unweightedPolicyTerm(batch: RlBatch, current: RlCurrent, config: RlLossConfig): PolicyLossResult {
  const { lossMask, advantages, oldLogprobs } = batch;
  const aggregation = { lossAggMode: config.lossAggMode, lossScaleFactor: config.lossScaleFactor };
  const common = {
    logprobs: current.logprobs,
    oldLogprobs,
    advantages,
    lossMask,
    clipRatioLow: config.clipRatioLow,
    clipRatioHigh: config.clipRatioHigh,
  };
  if (config.policyLoss === 'cispo') return cispoLoss({ ...aggregation, ...common });
  if (config.policyLoss === 'gspo') return gspoLoss({ ...common, lossAggMode: 'seq-mean-token-mean' });
  return ppoClipLoss({ ...aggregation, ...common, clipRatioC: config.clipRatioC });
}

/** The composite loss and its gradients, in float64. */
export function rlLossTerms(batch: RlBatch, current: RlCurrent, config: RlLossConfig): RlLossTerms {
  const { lossMask } = batch;
  const aggregation = { lossAggMode: config.lossAggMode, lossScaleFactor: config.lossScaleFactor };
  const policy = policyTerm(batch, current, config);
  let loss = policy.loss;
  const gradLogprobs = policy.gradLogprobs;
  const metrics: Record<string, number> = { pg_loss: policy.loss, ...policy.metrics };
  const result: RlLossTerms = { loss, gradLogprobs, metrics };

  if (current.entropies) {
    const entropy = entropyBonus({ ...aggregation, entropies: current.entropies, lossMask, coef: config.entropyCoef });
    metrics.entropy = entropy.metrics.entropy;
    if (config.entropyCoef !== 0) {
      loss += entropy.loss;
      result.gradEntropies = entropy.gradEntropies;
    }
  } else if (config.entropyCoef !== 0) {
    throw new InvalidArgumentError(
      `entropyCoef is ${config.entropyCoef} but the model gave no entropies; pass entropies or set entropyCoef to 0`,
      {
        entropyCoef: config.entropyCoef,
      },
    );
  }

  if (config.useKlLoss) {
    if (!batch.refLogprobs)
      throw new InvalidArgumentError(
        'useKlLoss is true but no refLogprobs were given; pass refLogprobs or set useKlLoss to false',
        {},
      );
    const kl = klPenaltyLoss({
      ...aggregation,
      logprobs: current.logprobs,
      refLogprobs: batch.refLogprobs,
      lossMask,
      estimator: config.klLossType,
    });
    loss += config.klLossCoef * kl.loss;
    addScaled(gradLogprobs, kl.gradLogprobs, config.klLossCoef);
    metrics.kl = kl.metrics.kl;
    metrics.kl_coef = config.klLossCoef;
  }

  if (batch.returns) {
    if (!batch.oldValues)
      throw new InvalidArgumentError('the value loss needs both returns and oldValues; give both or neither', {});
    if (!current.values) {
      throw new InvalidArgumentError(
        'the batch has returns (value loss on) but the model gave no values; use a model with a value head or drop returns',
        {},
      );
    }
    const value = valueLoss({
      ...aggregation,
      values: current.values,
      oldValues: batch.oldValues,
      returns: batch.returns,
      lossMask,
      clipRangeValue: config.clipRangeValue,
    });
    loss += config.vfCoef * value.loss;
    result.gradValues = value.gradValues.map((g) => g.map((x) => config.vfCoef * x));
    Object.assign(metrics, value.metrics);
  }
  result.loss = loss;
  metrics.loss = loss;
  return result;
}

/** The composite RL loss as a TokenLoss. Invalid configs and missing inputs are rejected here. */
export function rlLoss(options: RlBatch & { config?: RlLossConfigInput }): TokenLoss {
  const parsed = rlLossConfigSchema.safeParse(options.config ?? {});
  if (!parsed.success) {
    throw new InvalidArgumentError(
      `invalid rlLoss config: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
      {
        issues: parsed.error.issues,
      },
    );
  }
  const config = parsed.data;
  if (config.lossAggMode === 'seq-mean-token-sum-norm' && config.lossScaleFactor === null) {
    throw new InvalidArgumentError(
      'lossAggMode seq-mean-token-sum-norm divides by a constant: set lossScaleFactor (e.g. the max response length)',
      {
        lossAggMode: config.lossAggMode,
      },
    );
  }
  const { config: _ignored, ...batch } = options;
  assertSameShape('oldLogprobs', batch.oldLogprobs, batch.lossMask);
  assertSameShape('advantages', batch.advantages, batch.lossMask);
  if (batch.importanceWeights) assertSameShape('importanceWeights', batch.importanceWeights, batch.lossMask);
  if (config.useKlLoss) {
    if (!batch.refLogprobs)
      throw new InvalidArgumentError(
        'useKlLoss is true but no refLogprobs were given; pass refLogprobs or set useKlLoss to false',
        {},
      );
    assertSameShape('refLogprobs', batch.refLogprobs, batch.lossMask);
  }
  if ((batch.returns === undefined) !== (batch.oldValues === undefined)) {
    throw new InvalidArgumentError('the value loss needs both returns and oldValues; give both or neither', {
      returns: batch.returns !== undefined,
      oldValues: batch.oldValues !== undefined,
    });
  }
  if (batch.returns) {
    assertSameShape('returns', batch.returns, batch.lossMask);
    assertSameShape('oldValues', batch.oldValues!, batch.lossMask);
  }
  const serverLoss = serverLossSpec(batch, config);
  return {
    name: config.policyLoss,
    dependsOnCurrent: true,
    detachValueHead: config.detachValueHead,
    ...(serverLoss === undefined ? {} : { serverLoss }),
    compute(input: TokenLossInput): TokenLossOutput {
      return toOutput(rlLossTerms(batch, input, config));
    },
  };
}

/** DPO / IPO over preference pairs as a TokenLoss (./losses/dpo.ts). */
export function dpoLoss(options: Omit<DpoOptions, 'logprobs'>): TokenLoss {
  assertSameShape('refLogprobs', options.refLogprobs, options.lossMask);
  return {
    name: `dpo-${options.lossType ?? 'sigmoid'}`,
    dependsOnCurrent: true,
    compute(input: TokenLossInput): TokenLossOutput {
      const result = dpoPairLoss({ ...options, logprobs: input.logprobs });
      return {
        loss: result.loss,
        gradLogprobs: toFloat32(result.gradLogprobs),
        metrics: { loss: result.loss, ...result.metrics },
      };
    },
  };
}

/** Negative log-likelihood of the masked tokens as a TokenLoss (./losses/sft.ts). */
export function sftLoss(lossMask: Sequences): TokenLoss {
  return {
    name: 'sft',
    dependsOnCurrent: false,
    compute(input: TokenLossInput): TokenLossOutput {
      const result = negativeLogLikelihood({ logprobs: input.logprobs, lossMask });
      return {
        loss: result.loss,
        gradLogprobs: toFloat32(result.gradLogprobs),
        metrics: { loss: result.loss, ...result.metrics },
      };
    },
  };
}

function toOutput(terms: RlLossTerms): TokenLossOutput {
  const output: TokenLossOutput = {
    loss: terms.loss,
    gradLogprobs: toFloat32(terms.gradLogprobs),
    metrics: terms.metrics,
  };
  if (terms.gradValues) output.gradValues = toFloat32(terms.gradValues);
  if (terms.gradEntropies) output.gradEntropies = toFloat32(terms.gradEntropies);
  return output;
}

function addScaled(target: Float64Array[], source: readonly Float64Array[], scale: number): void {
  for (const [i, out] of target.entries()) {
    const add = at(source, i);
    for (let t = 0; t < out.length; t++) out[t] = at(out, t) + scale * at(add, t);
  }
}
