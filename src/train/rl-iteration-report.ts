/**
 * What an RL iteration reports: its metrics, from the collected batch and the update, and the
 * warnings they raise (an iteration that trained on little or nothing says so out loud).
 */
import { rewardComponentMetrics } from '../rewards/component-metrics.ts';
import type { AlgorithmPreset } from './algorithm-presets.ts';
import type { IterationBatch } from './rl-collect.ts';
import type { UpdateReport } from './rl-update.ts';
import type { IterationMetrics, RlConfig, TrainingWarning } from './rl.ts';

/** An iteration's metrics from its collected batch and its update (NaN / 0 where nothing was trained). */
export function iterationMetrics({
  iteration,
  collected,
  update,
  learningRate,
  seconds,
}: {
  iteration: number;
  collected: IterationBatch;
  update: UpdateReport | undefined;
  learningRate: number;
  seconds: number;
}): IterationMetrics {
  const { stats, kept: trajectories } = collected;
  // reward/<name>, reward/<name>/failures, rewardFailures over every generated episode (none without components).
  // offPolicy/* when the update corrected (rl-update-off-policy.ts).
  const scalars = { ...rewardComponentMetrics(collected.generated), ...update?.scalars };
  return {
    ...(Object.keys(scalars).length === 0 ? {} : { scalars }),
    iteration,
    reward: stats.meanReward,
    success: stats.successRate,
    episodes: stats.episodes,
    trained: trajectories.length,
    trainedTokens: trajectories.reduce((sum, t) => sum + t.lossMask.reduce((n, m) => n + m, 0), 0),
    generationBatches: collected.generationBatches,
    loss: update?.loss ?? NaN,
    pgLoss: update?.pgLoss ?? NaN,
    klToReference: update?.klToReference ?? 0,
    ppoKl: update?.ppoKl ?? 0,
    approxKl: update?.approxKl ?? 0,
    entropy: update?.entropy ?? NaN,
    clipfrac: update?.clipfrac ?? 0,
    gradNorm: update?.gradNorm ?? 0,
    learningRate,
    invalidActionRate: stats.invalidActionRate,
    rolloutTokensPerSecond: stats.tokensPerSecond,
    trainTokensPerSecond: update?.tokensPerSecond ?? 0,
    seconds,
  };
}

/** What an iteration's metrics say went wrong without stopping it. */
export function iterationWarnings(
  metrics: IterationMetrics,
  keptGroups: number,
  config: RlConfig,
  preset: AlgorithmPreset,
): TrainingWarning[] {
  const { iteration } = metrics;
  const warnings: TrainingWarning[] = [];
  if (metrics.episodes > 0 && metrics.invalidActionRate === 1) {
    warnings.push({
      iteration,
      kind: 'all-actions-invalid',
      message: `every action in iteration ${iteration} was invalid (${metrics.episodes} episodes)`,
    });
  }
  if (preset.dropUniformGroups && keptGroups < config.tasksPerIteration) {
    warnings.push({
      iteration,
      kind: 'dynamic-sampling-short',
      message:
        `iteration ${iteration}: dynamic sampling found ${keptGroups} of ${config.tasksPerIteration} groups with varying rewards ` +
        `in ${metrics.generationBatches} generation batches (maxGenerationBatches ${config.maxGenerationBatches}); training on those`,
    });
  }
  const failed = metrics.scalars?.rewardFailures ?? 0;
  if (failed > 0) {
    const names = Object.entries(metrics.scalars ?? {})
      .filter(([key, value]) => key.endsWith('/failures') && value > 0)
      .map(([key, value]) => `${key.slice('reward/'.length, -'/failures'.length)} ${value}`);
    warnings.push({
      iteration,
      kind: 'reward-failures',
      message: `iteration ${iteration}: ${failed} episodes could not be scored (${names.join(', ')}); their groups were left out of the update`,
    });
  }
  if (metrics.trainedTokens === 0) {
    const why = preset.dropUniformGroups
      ? ' (dynamic sampling dropped every group: no group’s rewards varied)'
      : ' (no trajectory had a policy token)';
    warnings.push({
      iteration,
      kind: 'no-trained-tokens',
      message: `iteration ${iteration} trained on 0 tokens${why}; the weights did not change`,
    });
  }
  return warnings;
}
