/**
 * Supervised fine-tuning loss: mean negative log-likelihood of the masked tokens,
 *   L = −Σ m·logp / Σ m        dL/dlogp[i][t] = −m[i][t] / Σ m
 * The gradient does not depend on the current log-probs (`dependsOnCurrent: false` in the
 * TokenLoss wrapper `sftLoss`, ../rl-loss.ts). Token-mean, as TRL `SFTTrainer`.
 */
import { at } from '../../core/indexing.ts';
import { assertSameShape, type Sequences } from '../sequences.ts';

export function negativeLogLikelihood({ logprobs, lossMask }: { logprobs: Sequences; lossMask: Sequences }): {
  loss: number;
  gradLogprobs: Float64Array[];
  metrics: { nll: number; tokens: number };
} {
  assertSameShape('logprobs', logprobs, lossMask);
  const gradLogprobs = nllGradient(lossMask);
  let loss = 0;
  let tokens = 0;
  for (const [i, mask] of lossMask.entries()) {
    const gradient = at(gradLogprobs, i);
    const logprobRow = at(logprobs, i);
    for (let t = 0; t < mask.length; t++) {
      loss += at(gradient, t) * at(logprobRow, t);
      tokens += at(mask, t);
    }
  }
  return { loss, gradLogprobs, metrics: { nll: loss, tokens } };
}

/** −m / Σ m: the gradient, a function of the mask alone. */
export function nllGradient(lossMask: Sequences): Float64Array[] {
  let count = 0;
  for (const mask of lossMask) for (let t = 0; t < mask.length; t++) count += at(mask, t);
  return lossMask.map((mask) => {
    const out = new Float64Array(mask.length);
    if (count > 0) for (let t = 0; t < mask.length; t++) out[t] = -at(mask, t) / count;
    return out;
  });
}
