/**
 * Signal `reward-validation-divergence`: train reward rising while held-out (validation) success
 * falls — the policy gets better at the training reward and worse at the task (Goodhart; the
 * reward-hacking pattern of Skalse et al., "Defining and Characterizing Reward Hacking", 2022).
 *
 * Over the span of the last `validations` validated iterations [a, b]:
 *   rise = slope_LS(train reward over iterations a..b) · (b − a)
 *   fall = −slope_LS(validation success over those validations) · (b − a)
 * statistic = fall (success as a fraction; negative when validation rose); fires when
 * rise ≥ minRewardRise and fall ≥ threshold. Silent until `validations` validations exist.
 */
import { z } from 'zod';
import type { IterationSummary, SignalInput, SignalReading } from '../monitor-types.ts';
import { percent, slope } from '../statistics.ts';

export const rewardValidationDivergenceSchema = z.strictObject({
  threshold: z
    .number()
    .min(0)
    .default(0.1)
    .describe('fitted fall of validation success over the window (fraction: 0.1 = 10 points) that fires'),
  minRewardRise: z
    .number()
    .min(0)
    .default(0.05)
    .describe('fitted rise of the mean train reward over the window needed'),
  validations: z.number().int().min(2).default(3).describe('validated iterations in the window (the evidence needed)'),
});
export type RewardValidationDivergenceSettings = z.infer<typeof rewardValidationDivergenceSchema>;

export function rewardValidationDivergence(
  { summary, history }: SignalInput,
  settings: RewardValidationDivergenceSettings,
): SignalReading {
  const all: readonly IterationSummary[] = [...history, summary];
  const validated = all.filter((s) => s.validationSuccess !== undefined).slice(-settings.validations);
  const first = validated[0];
  const last = validated.at(-1);
  if (validated.length < settings.validations || first === undefined || last === undefined) {
    return { fired: false, message: `${validated.length} of ${settings.validations} validations so far` };
  }
  const span = last.iteration - first.iteration;
  const trained = all.filter((s) => s.iteration >= first.iteration && s.iteration <= last.iteration);
  const rise =
    slope(
      trained.map((s) => s.iteration),
      trained.map((s) => s.reward),
    ) * span;
  const fall =
    -slope(
      validated.map((s) => s.iteration),
      validated.map((s) => s.validationSuccess ?? 0),
    ) * span;
  if (!Number.isFinite(rise) || !Number.isFinite(fall)) return { fired: false, message: 'no trend to fit' };
  const fired = rise >= settings.minRewardRise && fall >= settings.threshold;
  return {
    statistic: fall,
    values: { 'reward-rise': rise },
    fired,
    message:
      `train reward ${rise >= 0 ? 'rose' : 'fell'} ${Math.abs(rise).toFixed(3)} over iterations ${first.iteration}–${last.iteration} ` +
      `while validation success ${fall >= 0 ? 'fell' : 'rose'} ${percent(Math.abs(fall))} ` +
      `(fires at a rise ≥ ${settings.minRewardRise} with a fall ≥ ${percent(settings.threshold)})`,
  };
}
