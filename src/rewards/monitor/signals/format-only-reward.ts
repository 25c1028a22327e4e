/**
 * Signal `format-only-reward`: the reward being earned by format terms rather than by the outcome —
 * the policy learns to write tags, not to solve the task (the format-reward caveat of
 * DeepSeek-R1, arXiv 2501.12948 §2.2.2, and of verifiers' format rewards).
 *
 * With the reward's components spec (weights w_c, kinds), over the iteration's episodes e:
 *   positive_e(c) = max(0, w_c · value_e(c))
 *   statistic     = Σ_e Σ_{c of kind 'format'} positive_e(c) / Σ_e Σ_c positive_e(c)
 * (the share of the positive reward paid by format terms); fires at ≥ threshold, given
 * ≥ minRewardedEpisodes episodes with positive reward. Silent without a spec or a format component.
 */
import { z } from 'zod';
import type { SignalInput, SignalReading } from '../monitor-types.ts';
import { percent } from '../statistics.ts';

export const formatOnlyRewardSchema = z.strictObject({
  threshold: z
    .number()
    .gt(0)
    .max(1)
    .default(0.8)
    .describe('share of the positive reward paid by format components that fires'),
  minRewardedEpisodes: z.number().int().positive().default(8).describe('episodes with positive reward needed'),
});
export type FormatOnlyRewardSettings = z.infer<typeof formatOnlyRewardSchema>;

export function formatOnlyReward(
  { episodes, rewardSpec }: SignalInput,
  settings: FormatOnlyRewardSettings,
): SignalReading {
  const formatNames = rewardSpec?.names.filter((name) => rewardSpec.kinds[name] === 'format') ?? [];
  if (rewardSpec === undefined || formatNames.length === 0)
    return { fired: false, message: 'the reward has no format component' };
  let format = 0;
  let total = 0;
  let rewarded = 0;
  let formatOnly = 0;
  for (const { episode } of episodes) {
    const components = episode.rewardComponents;
    if (components === undefined) continue;
    let episodeFormat = 0;
    let episodeTotal = 0;
    for (const name of rewardSpec.names) {
      const paid = Math.max(0, (rewardSpec.weights[name] ?? 1) * (components[name] ?? 0));
      episodeTotal += paid;
      if (formatNames.includes(name)) episodeFormat += paid;
    }
    format += episodeFormat;
    total += episodeTotal;
    if (episodeTotal > 0) rewarded++;
    if (episodeTotal > 0 && episodeFormat === episodeTotal) formatOnly++;
  }
  if (rewarded < settings.minRewardedEpisodes || total === 0)
    return { fired: false, message: `${rewarded} rewarded episodes (needs ${settings.minRewardedEpisodes})` };
  const statistic = format / total;
  return {
    statistic,
    values: { 'episodes-share': formatOnly / rewarded },
    fired: statistic >= settings.threshold,
    message:
      `format components (${formatNames.join(', ')}) paid ${percent(statistic)} of the positive reward; ` +
      `${formatOnly} of ${rewarded} rewarded episodes earned nothing else; fires at ${percent(settings.threshold)}`,
  };
}
