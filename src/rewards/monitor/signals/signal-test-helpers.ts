/** Runs a constructed run through a fresh monitor and returns each iteration's reading of one signal. */
import type { RewardComponentsSpec } from '../../../core/types.ts';
import type { RewardMonitorConfigInput } from '../monitor-config.ts';
import { constructedRun, type RunOptions, sumRewardSpec } from '../monitor-test-fixture.ts';
import type { SignalReading } from '../monitor-types.ts';
import { type MonitorSignal, rewardMonitor } from '../reward-monitor.ts';

export function readings(
  signal: MonitorSignal,
  run: RunOptions,
  { config, rewardSpec = sumRewardSpec }: { config?: RewardMonitorConfigInput; rewardSpec?: RewardComponentsSpec } = {},
): SignalReading[] {
  const monitor = rewardMonitor({ config, rewardSpec });
  return constructedRun(run).map((iteration) => monitor.observe(iteration).readings[signal]);
}

/** The iterations (1-based) at which the signal fired. */
export function firedAt(signalReadings: readonly SignalReading[]): number[] {
  return signalReadings.flatMap((reading, index) => (reading.fired ? [index + 1] : []));
}
