/**
 * Turn-level credit assignment, for training on bounded-history samples (one sample per turn: the
 * exact context the policy saw, then its reply). An episode is a sequence of turns k = 0 … K−1,
 * each a step of the turn-level MDP, as RAGEN's turn-level GAE and verl's multi-turn GRPO:
 *   r'_k = r_k − coef · Σ_{t ∈ turn k, mask 1} kl(old_t, ref_t)        KL in the reward (../kl.ts)
 * then, per estimator, over turns instead of tokens:
 *   grpo, grpo-no-std  A_k = (G − mean_g) / (std_g + ε), or G − mean_g;  G = Σ_k r'_k   (./grpo.ts)
 *   rloo               A_k = G − mean of the other episodes' G in the group          (./rloo.ts)
 *   reinforce++        A_k = whiten(G_k),  G_k = r'_k + γ·G_{k+1}                     (./reinforce-plus-plus.ts)
 *   gae                δ_k = r'_k + γ·V_{k+1} − V_k,  A_k = whiten(δ_k + γλ·A_{k+1}),  R_k = A_k + V_k  (./gae.ts)
 * with V_K = 0: an episode cut by the turn limit is credited as one that ended (no bootstrap), as
 * verl and RAGEN do. Whitening is over every turn of the batch. The caller broadcasts A_k (and
 * R_k) over turn k's generated tokens.
 *
 * Turn weighting: 'turn' (verl/RAGEN) makes every turn one sample; 'episode' scales an episode's
 * advantages by K̄/K (K̄ the batch's mean turn count) so that each episode counts once.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { klEstimate, type KlEstimator } from '../kl.ts';
import { gae } from './gae.ts';
import { grpoAdvantages } from './grpo.ts';
import { reinforcePlusPlusAdvantages } from './reinforce-plus-plus.ts';
import { rlooAdvantages } from './rloo.ts';
import { whiten } from './whiten.ts';

export const advantageEstimators = ['grpo', 'grpo-no-std', 'rloo', 'reinforce++', 'gae'] as const;
export type AdvantageEstimator = (typeof advantageEstimators)[number];

export const turnWeightings = ['episode', 'turn'] as const;
export type TurnWeighting = (typeof turnWeightings)[number];

/** The log-probs of one turn's sample under the sampler and the reference, with its loss mask. */
export interface TurnKlTerms {
  logprobs: ArrayLike<number>;
  refLogprobs: ArrayLike<number>;
  lossMask: ArrayLike<number>;
}

export interface CreditTurn {
  reward: number;
  /** V_k: the value head at the turn's first generated token (gae needs it on every turn). */
  value?: number;
  /** What KL in the reward is summed over; without it the turn's reward is not shaped. */
  kl?: TurnKlTerms;
}

export interface CreditEpisode {
  /** Episodes of the same task share it (grpo, rloo). */
  groupId: string;
  turns: readonly CreditTurn[];
}

export interface TurnLevelOptions {
  estimator: AdvantageEstimator;
  /** Discount per turn (reinforce++, gae). */
  gamma?: number;
  /** GAE λ per turn. */
  lambda?: number;
  /** KL to the reference subtracted from each turn's reward; null = off. */
  klInReward?: { estimator: KlEstimator; coef: number } | null;
  turnWeighting?: TurnWeighting;
}

export interface TurnLevelResult {
  /** A_k per episode and turn (turn weighting applied). */
  advantages: Float64Array[];
  /** R_k per episode and turn (gae only: the value head's targets). */
  returns?: Float64Array[];
  /** KL in the reward: the batch mean over turns of each turn's per-token mean estimate (absent when off). */
  rewardKl?: number;
}

export function turnLevelAdvantages(
  episodes: readonly CreditEpisode[],
  { estimator, gamma = 1, lambda = 1, klInReward = null, turnWeighting = 'turn' }: TurnLevelOptions,
): TurnLevelResult {
  const shaped = klInReward === null ? undefined : shapedRewards(episodes, klInReward);
  const tokenRewards =
    shaped?.rewards ?? episodes.map((episode) => Float64Array.from(episode.turns, (turn) => turn.reward));
  // Every turn is one step: a loss mask of ones over the episode's turns.
  const lossMask = episodes.map((episode) => new Float64Array(episode.turns.length).fill(1));
  const groupIds = episodes.map((episode) => episode.groupId);
  const { advantages, returns } = estimate(estimator, { episodes, tokenRewards, lossMask, groupIds, gamma, lambda });
  if (turnWeighting === 'episode') {
    const meanTurns = lossMask.reduce((n, mask) => n + mask.length, 0) / Math.max(1, episodes.length);
    advantages.forEach((perTurn) => {
      const weight = meanTurns / Math.max(1, perTurn.length);
      for (let k = 0; k < perTurn.length; k++) perTurn[k] = weight * at(perTurn, k);
    });
  }
  const result: TurnLevelResult = { advantages };
  if (returns !== undefined) result.returns = returns;
  if (shaped?.meanKl !== undefined) result.rewardKl = shaped.meanKl;
  return result;
}

interface EstimatorInput {
  episodes: readonly CreditEpisode[];
  tokenRewards: Float64Array[];
  lossMask: Float64Array[];
  groupIds: string[];
  gamma: number;
  lambda: number;
}

function estimate(
  estimator: AdvantageEstimator,
  input: EstimatorInput,
): { advantages: Float64Array[]; returns?: Float64Array[] } {
  const { tokenRewards, lossMask, groupIds, gamma } = input;
  switch (estimator) {
    case 'grpo':
      return { advantages: grpoAdvantages({ tokenRewards, lossMask, groupIds }).advantages };
    case 'grpo-no-std':
      return { advantages: grpoAdvantages({ tokenRewards, lossMask, groupIds, normalizeByStd: false }).advantages };
    case 'rloo':
      return { advantages: rlooAdvantages({ tokenRewards, lossMask, groupIds }).advantages };
    case 'reinforce++':
      return { advantages: reinforcePlusPlusAdvantages({ tokenRewards, lossMask, gamma }).advantages };
    case 'gae':
      return turnLevelGae(input);
  }
}

function turnLevelGae({ episodes, tokenRewards, lossMask, gamma, lambda }: EstimatorInput): {
  advantages: Float64Array[];
  returns: Float64Array[];
} {
  const advantages: Float64Array[] = [];
  const returns: Float64Array[] = [];
  episodes.forEach((episode, e) => {
    const values = Float64Array.from(episode.turns, (turn, k) => {
      if (turn.value === undefined) {
        throw new InvalidArgumentError(
          `turn-level gae needs a value on every turn; episode ${e} turn ${k} has none (score the turns with the value head)`,
          { episode: e, turn: k },
        );
      }
      return turn.value;
    });
    const out = gae({ tokenRewards: at(tokenRewards, e), values, lossMask: at(lossMask, e), gamma, lambda });
    advantages.push(out.advantages);
    returns.push(out.returns);
  });
  return { advantages: whiten(advantages, lossMask), returns };
}

/** r'_k = r_k − coef · Σ kl over the turn's generated tokens, and the batch mean of the per-turn token means. */
function shapedRewards(
  episodes: readonly CreditEpisode[],
  { estimator, coef }: { estimator: KlEstimator; coef: number },
): { rewards: Float64Array[]; meanKl?: number } {
  let klSum = 0;
  let shapedTurns = 0;
  const rewards = episodes.map((episode) =>
    Float64Array.from(episode.turns, (turn) => {
      if (turn.kl === undefined) return turn.reward;
      const { logprobs, refLogprobs, lossMask } = turn.kl;
      let kl = 0;
      let tokens = 0;
      for (let t = 0; t < lossMask.length; t++) {
        if (lossMask[t] !== 1) continue;
        kl += klEstimate(at(logprobs, t), at(refLogprobs, t), estimator).value;
        tokens++;
      }
      klSum += tokens > 0 ? kl / tokens : 0;
      shapedTurns++;
      return turn.reward - coef * kl;
    }),
  );
  return shapedTurns > 0 ? { rewards, meanKl: klSum / shapedTurns } : { rewards };
}
