/**
 * GRPO group-normalised outcome advantage (DeepSeekMath, arXiv:2402.03300), as verl
 * `compute_grpo_outcome_advantage` (`adv_estimator=grpo`, `norm_adv_by_std_in_grpo`):
 *   s_i = Σ_t tokenRewards[i][t]
 *   A_i = (s_i − mean_g) / (std_g + ε)   with the unbiased std of the group g of i
 *   A_i = s_i − mean_g                   when normalizeByStd = false (Dr. GRPO, arXiv:2503.20783)
 * A group of one gets mean 0 and std 1. A_i is broadcast over sequence i's loss mask.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
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
    const groupScores = members.map((i) => at(scores, i));
    const { mean, std } = members.length === 1 ? { mean: 0, std: 1 } : meanAndUnbiasedStd(groupScores);
    for (const i of members) {
      const score = at(scores, i);
      sequenceAdvantages[i] = normalizeByStd ? (score - mean) / (std + epsilon) : score - mean;
    }
  }
  return { advantages: broadcast(sequenceAdvantages, lossMask), sequenceAdvantages, scores };
}

/** s_i = Σ_t tokenRewards[i][t], after checking the shapes. */
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
  return tokenRewards.map((rewards) => {
    let sum = 0;
    for (let t = 0; t < rewards.length; t++) sum += at(rewards, t);
    return sum;
  });
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

export function meanAndUnbiasedStd(xs: readonly number[]): { mean: number; std: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  if (xs.length < 2) return { mean, std: 0 };
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1);
  return { mean, std: Math.sqrt(variance) };
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
