/**
 * Signal `answer-dominance`: the same final answer taking over different tasks — one task's answer
 * leaking into its neighbours, as agentrl's bench:real run showed (`19 + 12 = 31`, then
 * `13 + 12 = 31`, docs/bench-real.md), or a constant answer a lenient reward accepts.
 *
 *   share_g(A) = episodes of task g answering A / episodes of g with an answer
 *   statistic  = max_A mean_g share_g(A)        (1 = every task answers A; 1/G = one answer per task)
 * fires when statistic ≥ threshold and it rose by ≥ minRise over its early mean (the first
 * `baselineIterations` iterations with evidence) — given ≥ minGroups tasks, ≥ minAnsweredEpisodes
 * answers, and an open answer space: the early iterations gave ≥ minDistinctAnswers distinct answers
 * (a bandit's arms or a grid's moves are a small closed set, where one answer rightly wins).
 */
import { z } from 'zod';
import type { EpisodeView } from '../episode-view.ts';
import type { SignalInput, SignalReading } from '../monitor-types.ts';
import { mean, percent } from '../statistics.ts';

export const answerDominanceSchema = z.strictObject({
  threshold: z
    .number()
    .gt(0)
    .max(1)
    .default(0.5)
    .describe('mean share of the tasks’ answers taken by one answer that fires'),
  minRise: z.number().min(0).default(0.25).describe('rise of that share over its early mean needed'),
  baselineIterations: z
    .number()
    .int()
    .positive()
    .default(2)
    .describe('first iterations with evidence whose mean is the baseline'),
  minGroups: z.number().int().min(2).default(3).describe('tasks (groups) with an answer needed'),
  minAnsweredEpisodes: z.number().int().positive().default(8).describe('episodes with an answer needed'),
  minDistinctAnswers: z
    .number()
    .int()
    .positive()
    .default(8)
    .describe('distinct answers an early iteration must have given for the answer space to count as open'),
});
export type AnswerDominanceSettings = z.infer<typeof answerDominanceSchema>;

/** The most shared answer and its mean share over the tasks; undefined without answers. */
export function dominantAnswer(
  episodes: readonly EpisodeView[],
): { answer: string; share: number; groups: number } | undefined {
  const byGroup = new Map<string, Map<string, number>>();
  for (const e of episodes) {
    if (e.answer === '') continue;
    const counts = byGroup.get(e.groupId) ?? new Map<string, number>();
    counts.set(e.answer, (counts.get(e.answer) ?? 0) + 1);
    byGroup.set(e.groupId, counts);
  }
  const shares = new Map<string, number>();
  for (const counts of byGroup.values()) {
    const total = [...counts.values()].reduce((sum, n) => sum + n, 0);
    for (const [answer, n] of counts) shares.set(answer, (shares.get(answer) ?? 0) + n / total / byGroup.size);
  }
  let best: { answer: string; share: number; groups: number } | undefined;
  for (const [answer, share] of shares) {
    if (best === undefined || share > best.share) best = { answer, share, groups: byGroup.size };
  }
  return best;
}

/** The statistic when the iteration has the evidence (kept in the iteration's summary for the baseline). */
export function answerDominanceStatistic(
  episodes: readonly EpisodeView[],
  settings: AnswerDominanceSettings,
): number | undefined {
  const answered = episodes.filter((e) => e.answer !== '').length;
  const best = dominantAnswer(episodes);
  if (best === undefined || best.groups < settings.minGroups || answered < settings.minAnsweredEpisodes)
    return undefined;
  return best.share;
}

export function answerDominance(
  { episodes, summary, history }: SignalInput,
  settings: AnswerDominanceSettings,
): SignalReading {
  const statistic = summary.answerDominance;
  const best = dominantAnswer(episodes);
  if (statistic === undefined || best === undefined)
    return {
      fired: false,
      message: `too few tasks or answers (needs ${settings.minGroups} tasks, ${settings.minAnsweredEpisodes} answers)`,
    };
  const early = history.filter((s) => s.answerDominance !== undefined).slice(0, settings.baselineIterations);
  const described = `${percent(statistic)} of the tasks' answers are ${JSON.stringify(best.answer.slice(0, 40))}`;
  if (early.length < settings.baselineIterations)
    return { statistic, fired: false, message: `${described}; no early baseline yet` };
  const baseline = mean(early.map((s) => s.answerDominance ?? 0));
  const open = Math.max(...early.map((s) => s.distinctAnswers)) >= settings.minDistinctAnswers;
  const fired = open && statistic >= settings.threshold && statistic - baseline >= settings.minRise;
  return {
    statistic,
    fired,
    message:
      `${described} (early mean ${percent(baseline)}; fires at ≥ ${percent(settings.threshold)} and +${percent(settings.minRise)})` +
      (open ? '' : `; answer space closed (fewer than ${settings.minDistinctAnswers} distinct answers early on)`),
  };
}
