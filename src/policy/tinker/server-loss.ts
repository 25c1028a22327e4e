/**
 * A loss the Tinker server computes itself, so an update is ONE forward_backward round trip with
 * the sampler's log-probs (no forward first). The server's losses (Tinker docs, "Loss functions";
 * the SDK's `LossFnType` and `loss_fn_config` of tinker 0.38.0), summed over tokens, r_t =
 * exp(logp_t − q_t), q = the sampling log-probs, A = advantages:
 *   importance_sampling   L = −Σ_t r_t·A_t
 *   ppo                   L = −Σ_t min(r_t·A_t, clip(r_t, clip_low, clip_high)·A_t)       (Schulman et al. 2017, arXiv 1707.06347)
 *   cispo                 L = −Σ_t sg(clip(r_t, clip_low, clip_high))·A_t·logp_t          (MiniMax-M1, arXiv 2506.13585)
 * `clip_low_threshold` / `clip_high_threshold` go in `loss_fn_config` (ratios, e.g. 0.8 and 1.2),
 * or per token as `loss_fn_inputs` of the same names.
 *
 * A trainer whose algorithm is one of these attaches a `serverLoss` to its `TokenLoss`
 * (src/algorithms/server-loss-spec.ts); the token weights of its aggregation (token-mean: 1/N, …)
 * are folded into A, since every loss above is linear in A. TinkerPolicy uses it on a server that sums ('sum'); elsewhere it computes the loss
 * itself from `compute`.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { ServerLossSpec, TokenLoss } from '../../core/loss.ts';
import { toDatum, type Datum } from './wire.ts';

export type ServerLossFunction = 'importance_sampling' | 'ppo' | 'cispo';
export const serverLossFunctions: readonly ServerLossFunction[] = ['importance_sampling', 'ppo', 'cispo'];

/** The loss in the server's terms (src/core/loss.ts `ServerLossSpec`). */
export type ServerLoss = ServerLossSpec;

/** A TokenLoss that the server can compute itself. */
export type ServerComputableLoss = TokenLoss;

export function serverLossOf(loss: TokenLoss): ServerLoss | undefined {
  return loss.serverLoss;
}

/** The datums and config of a server-side loss. */
export function serverLossData(
  sequences: readonly (readonly number[])[],
  loss: ServerLoss,
): { data: Datum[]; lossConfig?: Record<string, number> } {
  if (!serverLossFunctions.includes(loss.lossFunction))
    throw new InvalidArgumentError(
      `serverLoss.lossFunction must be one of ${serverLossFunctions.join(', ')}, got "${loss.lossFunction}"`,
      {
        lossFunction: loss.lossFunction,
      },
    );
  const data = sequences.map((sequence, s) => {
    const perToken: Record<string, ArrayLike<number>> = {
      logprobs: at(loss.samplingLogprobs, s, 'sampling log-probs'),
      advantages: at(loss.advantages, s, 'advantages'),
    };
    if (loss.perTokenClip !== undefined) {
      perToken.clip_low_threshold = at(loss.perTokenClip.low, s, 'clip lows');
      perToken.clip_high_threshold = at(loss.perTokenClip.high, s, 'clip highs');
    }
    return toDatum(sequence, perToken);
  });
  const clip = loss.lossFunction === 'importance_sampling' || loss.perTokenClip !== undefined ? undefined : loss.clip;
  return clip === undefined
    ? { data }
    : { data, lossConfig: { clip_low_threshold: clip.low, clip_high_threshold: clip.high } };
}
