/**
 * Signal `length-drift`: reply length drifting with reward — longer replies paid more (a verbose
 * judge's or a length-biased reward's pull; Singhal et al., "A Long Way to Go: Investigating Length
 * Correlations in RLHF", arXiv 2310.03716) while the replies grow over the run.
 *
 *   statistic = Pearson r(mean reply characters, total reward) over the iteration's episodes
 *   growth    = mean reply characters now / their mean over the first `baselineIterations`
 * fires when statistic ≥ correlationThreshold and growth ≥ growthThreshold, given ≥ minEpisodes
 * episodes whose lengths and rewards vary.
 */
import { z } from 'zod';
import type { SignalInput, SignalReading } from '../monitor-types.ts';
import { mean, pearson } from '../statistics.ts';

export const lengthDriftSchema = z.strictObject({
  correlationThreshold: z
    .number()
    .min(-1)
    .max(1)
    .default(0.5)
    .describe('correlation of reply length with reward that fires (with the growth)'),
  growthThreshold: z
    .number()
    .gt(0)
    .default(1.5)
    .describe('reply length over its early mean that fires (with the correlation)'),
  baselineIterations: z
    .number()
    .int()
    .positive()
    .default(3)
    .describe('first iterations whose mean reply length is the baseline'),
  minEpisodes: z.number().int().min(3).default(16).describe('episodes in the iteration needed'),
});
export type LengthDriftSettings = z.infer<typeof lengthDriftSchema>;

export function lengthDrift({ episodes, summary, history }: SignalInput, settings: LengthDriftSettings): SignalReading {
  const withTurns = episodes.filter((e) => e.episode.turns.length > 0);
  const correlation = pearson(
    withTurns.map((e) => e.replyChars),
    withTurns.map((e) => e.reward),
  );
  if (withTurns.length < settings.minEpisodes || !Number.isFinite(correlation))
    return {
      fired: false,
      message: `${withTurns.length} episodes, lengths or rewards constant (needs ${settings.minEpisodes})`,
    };
  const early = history
    .map((s) => s.replyChars)
    .filter((chars): chars is number => chars !== undefined && chars > 0)
    .slice(0, settings.baselineIterations);
  const growth = early.length === settings.baselineIterations ? (summary.replyChars ?? 0) / mean(early) : undefined;
  const fired =
    correlation >= settings.correlationThreshold && growth !== undefined && growth >= settings.growthThreshold;
  return {
    statistic: correlation,
    ...(growth === undefined ? {} : { values: { growth } }),
    fired,
    message:
      `reply length correlates ${correlation.toFixed(2)} with reward; replies are ` +
      (growth === undefined ? 'not yet compared with the early ones' : `${growth.toFixed(2)}× their early length`) +
      ` (fires at r ≥ ${settings.correlationThreshold} and ≥ ${settings.growthThreshold}×)`,
  };
}
