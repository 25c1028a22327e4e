/**
 * An iteration's reward components as metrics (the keys the run store, the dashboard and the
 * trackers show): `reward/<name>` — the mean of that component over the generated episodes that
 * have it; `reward/<name>/failures` — episodes whose component failed (threw, or was not a finite
 * number); `rewardFailures` — episodes with any failure (each takes its group out of the update).
 * Episodes without components give no keys at all.
 */
import type { Trajectory } from '../core/types.ts';

export function rewardComponentMetrics(trajectories: readonly Trajectory[]): Record<string, number> {
  const sums = new Map<string, { sum: number; count: number }>();
  const failures = new Map<string, number>();
  let failed = 0;
  let reported = false;
  for (const trajectory of trajectories) {
    for (const [name, value] of Object.entries(trajectory.rewardComponents ?? {})) {
      reported = true;
      const entry = sums.get(name) ?? { sum: 0, count: 0 };
      entry.sum += value;
      entry.count += 1;
      sums.set(name, entry);
    }
    const names = Object.keys(trajectory.rewardFailures ?? {});
    if (names.length > 0) failed += 1;
    for (const name of names) failures.set(name, (failures.get(name) ?? 0) + 1);
  }
  if (!reported && failed === 0) return {};
  const metrics: Record<string, number> = { rewardFailures: failed };
  for (const [name, { sum, count }] of sums) metrics[`reward/${name}`] = sum / count;
  for (const name of sums.keys()) metrics[`reward/${name}/failures`] = failures.get(name) ?? 0;
  for (const [name, count] of failures) metrics[`reward/${name}/failures`] = count;
  return metrics;
}
