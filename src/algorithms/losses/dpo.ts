/**
 * Direct Preference Optimization (Rafailov et al. 2023, arXiv:2305.18290) and IPO (Azar et al.
 * 2023, arXiv:2310.12036) over pairs of trajectories, as TRL `DPOTrainer` (`loss_type` sigmoid |
 * ipo, `beta` default 0.1). With Σ the sum of a sequence's masked token log-probs,
 *   h = (Σlogπ(y_w) − Σlogπ_ref(y_w)) − (Σlogπ(y_l) − Σlogπ_ref(y_l))
 *   sigmoid: ℓ = −log σ(β·h)        dℓ/dh = −β·σ(−β·h)
 *   ipo:     ℓ = (h − 1/(2β))²      dℓ/dh = 2·(h − 1/(2β))
 * L = mean over pairs; dL/dlogp[w][t] = +mask·dℓ/dh / P, dL/dlogp[l][t] = −mask·dℓ/dh / P (a
 * sequence in several pairs accumulates). TRL's IPO divides each Σ by the sequence length; here
 * both losses use plain sums. Metrics as TRL: rewards_chosen = β·(Σlogπ(y_w) − Σlogπ_ref(y_w)),
 * rewards_rejected likewise, reward_accuracy = share of pairs with chosen > rejected,
 * reward_margin = mean(chosen − rejected).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { assertSameShape, type Sequences } from '../sequences.ts';

export const dpoLossTypes = ['sigmoid', 'ipo'] as const;
export type DpoLossType = (typeof dpoLossTypes)[number];

/** Indices of the preferred (chosen) and dispreferred (rejected) sequence of a pair. */
export interface PreferencePair {
  chosen: number;
  rejected: number;
}

export interface DpoOptions {
  logprobs: Sequences;
  refLogprobs: Sequences;
  lossMask: Sequences;
  pairs: readonly PreferencePair[];
  /** β (TRL default 0.1). */
  beta?: number;
  lossType?: DpoLossType;
}

export function dpoPairLoss({ logprobs, refLogprobs, lossMask, pairs, beta = 0.1, lossType = 'sigmoid' }: DpoOptions): {
  loss: number;
  gradLogprobs: Float64Array[];
  metrics: { rewards_chosen: number; rewards_rejected: number; reward_accuracy: number; reward_margin: number };
} {
  assertSameShape('logprobs', logprobs, lossMask);
  assertSameShape('refLogprobs', refLogprobs, lossMask);
  if (!dpoLossTypes.includes(lossType)) {
    throw new InvalidArgumentError(`unknown DPO loss type "${lossType}"; allowed: ${dpoLossTypes.join(', ')}`, {
      lossType,
      allowed: dpoLossTypes,
    });
  }
  if (!(beta > 0)) throw new InvalidArgumentError(`beta must be a positive number, got ${beta}`, { beta });
  if (pairs.length === 0)
    throw new InvalidArgumentError('pairs is empty; give at least one { chosen, rejected } pair', {});
  for (const pair of pairs) {
    for (const index of [pair.chosen, pair.rejected]) {
      if (!Number.isInteger(index) || index < 0 || index >= lossMask.length) {
        throw new InvalidArgumentError(`pair index ${index} is not a sequence index in [0, ${lossMask.length})`, {
          pair,
          sequences: lossMask.length,
        });
      }
    }
  }
  const logRatios = lossMask.map((mask, i) => {
    const logprobRow = at(logprobs, i);
    const refLogprobRow = at(refLogprobs, i);
    let sum = 0;
    for (let t = 0; t < mask.length; t++) sum += at(mask, t) * (at(logprobRow, t) - at(refLogprobRow, t));
    return sum;
  });
  const dLossDLogRatio = new Float64Array(lossMask.length);
  let loss = 0;
  let chosenSum = 0;
  let rejectedSum = 0;
  let correct = 0;
  for (const { chosen, rejected } of pairs) {
    const chosenLogRatio = at(logRatios, chosen);
    const rejectedLogRatio = at(logRatios, rejected);
    const h = chosenLogRatio - rejectedLogRatio;
    let dh: number;
    if (lossType === 'sigmoid') {
      loss += softplus(-beta * h);
      dh = -beta * sigmoid(-beta * h);
    } else {
      const offset = h - 1 / (2 * beta);
      loss += offset * offset;
      dh = 2 * offset;
    }
    dLossDLogRatio[chosen] = at(dLossDLogRatio, chosen) + dh / pairs.length;
    dLossDLogRatio[rejected] = at(dLossDLogRatio, rejected) - dh / pairs.length;
    chosenSum += beta * chosenLogRatio;
    rejectedSum += beta * rejectedLogRatio;
    if (chosenLogRatio > rejectedLogRatio) correct += 1;
  }
  const count = pairs.length;
  return {
    loss: loss / count,
    gradLogprobs: lossMask.map((mask, i) => {
      const out = new Float64Array(mask.length);
      const dLogRatio = at(dLossDLogRatio, i);
      for (let t = 0; t < mask.length; t++) out[t] = at(mask, t) * dLogRatio;
      return out;
    }),
    metrics: {
      rewards_chosen: chosenSum / count,
      rewards_rejected: rejectedSum / count,
      reward_accuracy: correct / count,
      reward_margin: (chosenSum - rejectedSum) / count,
    },
  };
}

/** log(1 + eˣ) without overflow. */
function softplus(x: number): number {
  return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
}

function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}
