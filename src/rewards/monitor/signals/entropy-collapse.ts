/**
 * Signal `entropy-collapse`: the policy's mean token entropy below an absolute floor, or fallen by a
 * large fraction from its early mean — the policy stops exploring, and whatever it exploits (a
 * hack included) is locked in (DAPO, arXiv 2503.14476 §3.1, on entropy collapse; Cui et al.,
 * "The Entropy Mechanism of RL for Reasoning LMs", arXiv 2505.22617).
 *
 *   baseline = mean entropy of the first `baselineIterations` iterations that measured one
 *   statistic = entropy / baseline (1 = unchanged)
 * fires when entropy < floor, or (with a baseline) statistic ≤ 1 − dropFraction.
 */
import { z } from 'zod';
import type { SignalInput, SignalReading } from '../monitor-types.ts';
import { mean, percent } from '../statistics.ts';

export const entropyCollapseSchema = z.strictObject({
  floor: z
    .number()
    .min(0)
    .default(0.01)
    .describe(
      'mean token entropy (nats) below which it fires at once (a healthy tiny frozen-lake run sits at 0.04–0.06)',
    ),
  dropFraction: z
    .number()
    .gt(0)
    .max(1)
    .default(0.8)
    .describe('fraction of the early mean entropy lost that fires (0.8: down to a fifth)'),
  baselineIterations: z
    .number()
    .int()
    .positive()
    .default(3)
    .describe('first iterations with an entropy whose mean is the baseline'),
});
export type EntropyCollapseSettings = z.infer<typeof entropyCollapseSchema>;

export function entropyCollapse({ current, history }: SignalInput, settings: EntropyCollapseSettings): SignalReading {
  const entropy = current.entropy;
  if (entropy === undefined || !Number.isFinite(entropy)) return { fired: false, message: 'no entropy measured' };
  const early = history
    .map((s) => s.entropy)
    .filter((value): value is number => value !== undefined && Number.isFinite(value))
    .slice(0, settings.baselineIterations);
  const baseline = early.length === settings.baselineIterations ? mean(early) : undefined;
  const ratio = baseline !== undefined && baseline > 0 ? entropy / baseline : undefined;
  const belowFloor = entropy < settings.floor;
  const dropped = ratio !== undefined && ratio <= 1 - settings.dropFraction;
  const against =
    baseline === undefined
      ? 'no early baseline yet'
      : `${percent(ratio ?? 0)} of its early mean ${baseline.toFixed(3)} (fires at ≤ ${percent(1 - settings.dropFraction)})`;
  return {
    ...(ratio === undefined ? {} : { statistic: ratio }),
    fired: belowFloor || dropped,
    message: `mean token entropy ${entropy.toFixed(3)} nats: ${against}; floor ${settings.floor}`,
  };
}
