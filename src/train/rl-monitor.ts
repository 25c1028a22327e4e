/**
 * The trainer's side of the reward-hacking monitor (src/rewards/monitor): after an iteration's
 * validation, the monitor reads the iteration's generated trajectories, its entropy and its
 * validation success; its `monitor/*` values join the iteration's `scalars` (so the run store, the
 * dashboard and the trackers get them), each fired signal is a 'reward-hacking' warning, and in mode
 * 'stop' the reason is returned and the run ends after this iteration.
 */
import type { RewardComponentsSpec, Trajectory } from '../core/types.ts';
import type { RewardMonitor } from '../rewards/monitor/index.ts';
import type { IterationMetrics, TrainingWarning } from './rl.ts';

export type { RewardMonitor };

/** A generated trajectory with its first observation's text, when the generator kept it. */
export type MonitoredTrajectory = Trajectory & { readonly prompt?: string | undefined };

/** Observes one finished iteration; returns why the run must stop (mode 'stop' and a signal fired), else undefined. */
export function watchIteration(
  monitor: RewardMonitor | undefined,
  metrics: IterationMetrics,
  trajectories: readonly MonitoredTrajectory[],
  warn: (warning: TrainingWarning) => void,
  rewardSpec?: RewardComponentsSpec,
): string | undefined {
  if (monitor === undefined || monitor.mode === 'off') return undefined;
  const { iteration } = metrics;
  const report = monitor.observe({
    iteration,
    episodes: trajectories.map((t) => (t.prompt === undefined ? t : { ...t, prompt: t.prompt })),
    entropy: metrics.entropy,
    ...(metrics.validationSuccess === undefined ? {} : { validationSuccess: metrics.validationSuccess }),
    ...(rewardSpec === undefined ? {} : { rewardSpec }),
  });
  metrics.scalars = { ...metrics.scalars, ...report.metrics };
  for (const { signal, message } of report.fired) {
    warn({
      iteration,
      kind: 'reward-hacking',
      message: `iteration ${iteration}: reward hacking? ${signal}: ${message}`,
    });
  }
  if (!report.stop) return undefined;
  return `the reward-hacking monitor (mode stop) saw ${report.fired.map((f) => f.signal).join(', ')} in iteration ${iteration}`;
}
