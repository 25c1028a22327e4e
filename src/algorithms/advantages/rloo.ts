/**
 * RLOO, REINFORCE leave-one-out (Ahmadian et al. 2024, arXiv:2402.14740), as verl
 * `compute_rloo_outcome_advantage` (`adv_estimator=rloo`). For a group of n responses with
 * scores s_i = Σ_t tokenRewards[i][t] and mean m:
 *   A_i = s_i·n/(n−1) − m·n/(n−1)  (= s_i − mean of the other n−1 scores)
 * A group of one keeps A_i = s_i. A_i is broadcast over sequence i's loss mask. The arithmetic
 * runs on scores divided by a power of two (../scaled-statistics.ts): ordinary scores give the
 * plain formula's values bit for bit, finite scores of any spread give finite advantages (a true
 * A_i beyond the doubles, as 1e308 against −1e308, saturates at ±Number.MAX_VALUE).
 */
import { at } from '../../core/indexing.ts';
import { saturate, scaledMoments } from '../scaled-statistics.ts';
import {
  broadcast,
  groupMembers,
  sequenceScores,
  type GroupAdvantageOptions,
  type GroupAdvantageResult,
} from './grpo.ts';

export function rlooAdvantages({ tokenRewards, lossMask, groupIds }: GroupAdvantageOptions): GroupAdvantageResult {
  const scores = sequenceScores(tokenRewards, lossMask, groupIds);
  const sequenceAdvantages = scores.slice();
  for (const members of groupMembers(groupIds).values()) {
    const n = members.length;
    if (n < 2) continue;
    const { scale, mean } = scaledMoments(members.map((i) => at(scores, i))); // mean / scale
    for (const i of members) {
      const score = at(scores, i) / scale;
      sequenceAdvantages[i] = saturate(((score * n) / (n - 1) - (mean * n) / (n - 1)) * scale);
    }
  }
  return { advantages: broadcast(sequenceAdvantages, lossMask), sequenceAdvantages, scores };
}
