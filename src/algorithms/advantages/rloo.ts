/**
 * RLOO, REINFORCE leave-one-out (Ahmadian et al. 2024, arXiv:2402.14740), as verl
 * `compute_rloo_outcome_advantage` (`adv_estimator=rloo`). For a group of n responses with
 * scores s_i = Σ_t tokenRewards[i][t] and mean m:
 *   A_i = s_i·n/(n−1) − m·n/(n−1)  (= s_i − mean of the other n−1 scores)
 * A group of one keeps A_i = s_i. A_i is broadcast over sequence i's loss mask.
 */
import { at } from '../../core/indexing.ts';
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
    const mean = members.reduce((a, i) => a + at(scores, i), 0) / n;
    for (const i of members) sequenceAdvantages[i] = (at(scores, i) * n) / (n - 1) - (mean * n) / (n - 1);
  }
  return { advantages: broadcast(sequenceAdvantages, lossMask), sequenceAdvantages, scores };
}
