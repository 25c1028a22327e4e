/**
 * The reward-hacking monitor's settings: what it does when a signal fires (`mode`) and, per signal,
 * its threshold and the evidence it needs (docs/reward-monitor.md). Every field has a default; an
 * unknown key is an error naming the allowed ones.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.ts';
import { answerDominanceSchema } from './signals/answer-dominance.ts';
import { answerLeakageSchema } from './signals/answer-leakage.ts';
import { entropyCollapseSchema } from './signals/entropy-collapse.ts';
import { formatOnlyRewardSchema } from './signals/format-only-reward.ts';
import { lengthDriftSchema } from './signals/length-drift.ts';
import { rewardValidationDivergenceSchema } from './signals/reward-validation-divergence.ts';
import { toolOutputParrotingSchema } from './signals/tool-output-parroting.ts';

export const monitorModes = ['warn', 'stop', 'off'] as const;
export type MonitorMode = (typeof monitorModes)[number];

export const monitorModeSchema = z
  .enum(monitorModes)
  .default('warn')
  .describe(
    'reward-hacking monitor: warn (a fired signal is a warning), stop (the run ends after that iteration) or off',
  );

/** Per-signal thresholds, each field defaulted. */
export const monitorThresholdsSchema = z.strictObject({
  rewardValidationDivergence: rewardValidationDivergenceSchema.prefault({}),
  answerLeakage: answerLeakageSchema.prefault({}),
  answerDominance: answerDominanceSchema.prefault({}),
  formatOnlyReward: formatOnlyRewardSchema.prefault({}),
  lengthDrift: lengthDriftSchema.prefault({}),
  entropyCollapse: entropyCollapseSchema.prefault({}),
  toolOutputParroting: toolOutputParrotingSchema.prefault({}),
});
export type MonitorThresholds = z.infer<typeof monitorThresholdsSchema>;
export type MonitorThresholdsInput = z.input<typeof monitorThresholdsSchema>;

export const rewardMonitorConfigSchema = monitorThresholdsSchema.extend({ mode: monitorModeSchema });
export type RewardMonitorConfig = z.infer<typeof rewardMonitorConfigSchema>;
export type RewardMonitorConfigInput = z.input<typeof rewardMonitorConfigSchema>;

/** Thresholds from JSON text (the CLI's `--monitor-thresholds`), as an `InvalidArgumentError` naming each bad field. */
export function parseMonitorThresholds(text: string): MonitorThresholds {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`monitor thresholds: not JSON (${(error as Error).message}): ${text.slice(0, 80)}`);
  }
  const parsed = monitorThresholdsSchema.safeParse(value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(top)'}: ${issue.message}`);
    throw new InvalidArgumentError(
      `monitor thresholds: ${problems.join('; ')} (signals: ${Object.keys(monitorThresholdsSchema.shape).join(', ')})`,
    );
  }
  return parsed.data;
}

/** `--monitor-thresholds`: the thresholds as JSON text (a mapping in a config file), checked when the options are read. */
export const monitorThresholdsTextSchema = z
  .string()
  .superRefine((text, context) => {
    try {
      parseMonitorThresholds(text);
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message });
    }
  })
  .default('{}')
  .describe(
    'reward-hacking monitor thresholds as JSON, e.g. {"entropyCollapse":{"floor":0.05}} (docs/reward-monitor.md; defaults for the rest)',
  );
