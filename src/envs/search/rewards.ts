/**
 * Search's step reward as named components (issue 31), the survey's composite (reward.ts computes
 * the parts):
 *   R = solved + λ1 · citation − λ2 · search_cost − λ3 · hallucination − formatPenalty · invalid_action
 * `solved` (outcome): exact match after SQuAD normalisation; `citation` (shaping): the fraction of
 * supporting articles cited and retrieved; `search_cost` (penalty): searches / budget K;
 * `hallucination` (penalty): a wrong answer found in no retrieved article; `invalid_action` (penalty).
 * With every λ at 0 (the default) the components are still recorded; only `solved` pays.
 */
import { reward } from '../../rewards/reward.ts';
import { rubric, type Rubric } from '../../rewards/rubric.ts';
import type { ToolTaskStep } from '../tool-task.ts';
import { answerSolved, invalidTurn } from '../tool-task-rewards.ts';
import type { SearchEpisode } from './env.ts';
import type { SearchRewardParts } from './reward.ts';

type SearchStep = ToolTaskStep<SearchEpisode>;

/** A part of the answer's score, 0 on other turns. */
function part(name: string, key: keyof SearchRewardParts, kind: 'shaping' | 'penalty') {
  return reward<SearchStep>(
    name,
    ({ episode, turn }) => (turn.kind === 'answer' && episode.scored !== null ? episode.scored[key] : 0),
    { kind },
  );
}

export function searchRubric(options: {
  citationWeight: number;
  searchCostWeight: number;
  hallucinationWeight: number;
  formatPenalty: number;
}): Rubric<SearchStep> {
  return rubric(
    [
      answerSolved<SearchEpisode>(),
      part('citation', 'citation', 'shaping'),
      part('search_cost', 'searchCost', 'penalty'),
      part('hallucination', 'hallucination', 'penalty'),
      invalidTurn<SearchEpisode>(),
    ],
    [1, options.citationWeight, -options.searchCostWeight, -options.hallucinationWeight, -options.formatPenalty],
  );
}
