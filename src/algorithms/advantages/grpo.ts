/**
 * GRPO group-normalised outcome advantage (DeepSeekMath, arXiv:2402.03300), as verl
 * `compute_grpo_outcome_advantage` (`adv_estimator=grpo`, `norm_adv_by_std_in_grpo`):
 *   s_i = Σ_t tokenRewards[i][t]
 *   A_i = (s_i − mean_g) / (std_g + ε)   with the unbiased std of the group g of i
 *   A_i = s_i − mean_g                   when normalizeByStd = false (Dr. GRPO, arXiv:2503.20783)
 * A group of one gets mean 0 and std 1. A_i is broadcast over sequence i's loss mask.
 *
 * Any spread of finite rewards gives finite advantages (rewards of ±1e308 in one group included):
 * sums, means and stds run on values divided by a power of two (../scaled-statistics.ts), which
 * leaves the results of ordinary rewards bit for bit unchanged; an unnormalised A_i whose true
 * value is beyond the doubles saturates at ±Number.MAX_VALUE. NaN or ±Infinity rewards propagate.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { saturate, scaledMoments, scaledSum } from '../scaled-statistics.ts';
import { assertSameShape, type Sequences } from '../sequences.ts';

export interface GroupAdvantageOptions {
  tokenRewards: Sequences;
  lossMask: Sequences;
  /** One key per sequence; sequences sampled for the same task share it. */
  groupIds: readonly (string | number)[];
}

export interface GroupAdvantageResult {
  /** A_i · lossMask[i][t]. */
  advantages: Float64Array[];
  /** A_i, one per sequence. */
  sequenceAdvantages: number[];
  /** s_i, one per sequence. */
  scores: number[];
}

export function grpoAdvantages({
  tokenRewards,
  lossMask,
  groupIds,
  normalizeByStd = true,
  epsilon = 1e-6,
}: GroupAdvantageOptions & { normalizeByStd?: boolean; epsilon?: number }): GroupAdvantageResult {
  const scores = sequenceScores(tokenRewards, lossMask, groupIds);
  const sequenceAdvantages = new Array<number>(scores.length);
  for (const members of groupMembers(groupIds).values()) {
    // Mean and std of the group's scores, divided by `scale` (a power of two: exact, cannot overflow).
    const { scale, mean, std } =
      members.length === 1 ? { scale: 1, mean: 0, std: 1 } : scaledMoments(members.map((i) => at(scores, i)));
    for (const i of members) {
      const deviation = at(scores, i) / scale - mean;
      sequenceAdvantages[i] = normalizeByStd ? deviation / (std + epsilon / scale) : saturate(deviation * scale);
    }
  }
  return { advantages: broadcast(sequenceAdvantages, lossMask), sequenceAdvantages, scores };
}

/** s_i = Σ_t tokenRewards[i][t] (saturating, never an intermediate overflow), after checking the shapes. */
export function sequenceScores(tokenRewards: Sequences, lossMask: Sequences, groupIds: readonly unknown[]): number[] {
  assertSameShape('tokenRewards', tokenRewards, lossMask);
  if (groupIds.length !== lossMask.length) {
    throw new InvalidArgumentError(
      `groupIds has ${groupIds.length} entries but there are ${lossMask.length} sequences; give one per sequence`,
      {
        groupIds: groupIds.length,
        sequences: lossMask.length,
      },
    );
  }
  return tokenRewards.map((rewards) => scaledSum(rewards));
}

/** Group key → indices of its sequences, in order of first appearance. */
export function groupMembers<Key>(groupIds: readonly Key[]): Map<Key, number[]> {
  const groups = new Map<Key, number[]>();
  groupIds.forEach((id, i) => {
    const members = groups.get(id);
    if (members) members.push(i);
    else groups.set(id, [i]);
  });
  return groups;
}

/** perSequence[i] · lossMask[i][t]. */
export function broadcast(perSequence: readonly number[], lossMask: Sequences): Float64Array[] {
  return lossMask.map((mask, i) => {
    const value = at(perSequence, i);
    const out = new Float64Array(mask.length);
    for (let t = 0; t < mask.length; t++) out[t] = value * at(mask, t);
    return out;
  });
}
