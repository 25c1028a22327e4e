/**
 * Signal `answer-leakage`: rewarded replies whose answer the episode had already been shown — the
 * answer leaking through the prompt or an observation instead of being worked out (agentrl's own
 * "answers leaking through observations"; verl#7004 asks for such monitors).
 *
 * An episode copied its answer A (its final `<answer>`, normalised, at least `minAnswerChars`
 * long) when A occurs as a phrase in the text it was shown before that reply — its prompt (when
 * known) and its earlier observations, tool outputs left out (a tool is a legitimate source;
 * parroting one is `tool-output-parroting`) — and A is not text the env shows every task: it occurs
 * in the shown text of fewer than `templateShare` of the iteration's other tasks (groups). So a
 * move name that every prompt lists is not a leak; a number only this task's observation carries is.
 *
 *   statistic = copied rewarded episodes / rewarded episodes with an answer of ≥ minAnswerChars
 * fires at ≥ threshold, given ≥ minRewardedEpisodes such episodes over ≥ minGroups tasks.
 * A task whose prompt lists its candidate answers (multiple choice) copies legitimately: raise the
 * threshold above 1 for it.
 */
import { z } from 'zod';
import { containsPhrase } from '../answer-text.ts';
import type { EpisodeView } from '../episode-view.ts';
import type { SignalInput, SignalReading } from '../monitor-types.ts';
import { percent } from '../statistics.ts';

export const answerLeakageSchema = z.strictObject({
  threshold: z
    .number()
    .min(0)
    .default(0.5)
    .describe('share of rewarded answers copied from what the episode was shown that fires'),
  minAnswerChars: z
    .number()
    .int()
    .positive()
    .default(3)
    .describe('shorter answers (a digit, an arm) occur anywhere by chance and are not counted'),
  minRewardedEpisodes: z.number().int().positive().default(8).describe('rewarded episodes with such an answer needed'),
  minGroups: z.number().int().min(2).default(3).describe('tasks (groups) in the iteration needed'),
  templateShare: z
    .number()
    .gt(0)
    .max(1)
    .default(0.5)
    .describe('an answer shown to at least this share of the other tasks is template text, not a leak'),
});
export type AnswerLeakageSettings = z.infer<typeof answerLeakageSchema>;

export function answerLeakage({ episodes }: SignalInput, settings: AnswerLeakageSettings): SignalReading {
  const groups = groupTexts(episodes);
  const eligible = episodes.filter((e) => e.rewarded && [...e.answer].length >= settings.minAnswerChars);
  if (groups.size < settings.minGroups || eligible.length < settings.minRewardedEpisodes) {
    return {
      fired: false,
      message: `${eligible.length} rewarded answers over ${groups.size} tasks (needs ${settings.minRewardedEpisodes} over ${settings.minGroups})`,
    };
  }
  // The tasks shown each answer, computed once per distinct answer (not per episode and task).
  const showingGroups = new Map<string, Set<string>>();
  const isTemplate = (answer: string, ownGroup: string): boolean => {
    let showing = showingGroups.get(answer);
    if (showing === undefined) {
      showing = new Set(
        [...groups].filter(([, texts]) => texts.some((t) => containsPhrase(t, answer))).map(([g]) => g),
      );
      showingGroups.set(answer, showing);
    }
    const others = groups.size - 1;
    const othersShowing = showing.size - (showing.has(ownGroup) ? 1 : 0);
    return others > 0 && othersShowing / others >= settings.templateShare;
  };
  const copied = eligible.filter((e) => containsPhrase(e.shownText, e.answer) && !isTemplate(e.answer, e.groupId));
  const statistic = copied.length / eligible.length;
  const example = copied[0]?.answer;
  return {
    statistic,
    fired: statistic >= settings.threshold,
    message:
      `${copied.length} of ${eligible.length} rewarded answers (${percent(statistic)}) were text the episode had been shown` +
      `${example === undefined ? '' : ` (e.g. ${JSON.stringify(example.slice(0, 40))})`}; fires at ${percent(settings.threshold)}`,
  };
}

/** Each task's shown texts (one per episode). */
function groupTexts(episodes: readonly EpisodeView[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const e of episodes) {
    const texts = groups.get(e.groupId) ?? [];
    texts.push(e.shownText);
    groups.set(e.groupId, texts);
  }
  return groups;
}
