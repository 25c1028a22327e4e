/**
 * The reward-hacking monitor per role (src/rewards/monitor): each role has its own monitor (its own
 * history: its baselines are its own iterations), which reads that role's live episodes of the
 * iteration (with their first observations), its trainer's entropy and the role's validation
 * success against the fixed opponents (`role/<role>/vsFixed/success`). Its metrics join the
 * iteration's scalars as `role/<role>/monitor/<signal>`; each fired signal is a 'reward-hacking'
 * warning naming the role, and in mode 'stop' the run ends after the iteration.
 */
import type { RewardComponentsSpec, Trajectory } from '../../core/types.ts';
import type { RewardMonitor } from '../../rewards/monitor/index.ts';
import type { IterationMetrics, TrainingWarning } from '../rl.ts';
import type { Trainer } from './role-players.ts';

/** A role's live trajectory with its episode's first observation (what answer leakage reads). */
export type RoleEpisode = Trajectory & { readonly prompt?: string };

/** Observes one finished iteration for every monitored role; returns why the run must stop, else undefined. */
export function watchRoles(
  monitors: ReadonlyMap<string, RewardMonitor>,
  trainers: readonly Trainer[],
  metrics: IterationMetrics,
  episodes: readonly RoleEpisode[],
  warn: (warning: TrainingWarning) => void,
  rewardSpec?: RewardComponentsSpec,
): string | undefined {
  const stops: string[] = [];
  const { iteration } = metrics;
  for (const [role, monitor] of monitors) {
    if (monitor.mode === 'off') continue;
    const scalar = (key: string): number | undefined => metrics.scalars?.[`role/${role}/${key}`];
    const trainer = trainers.find((t) => t.roles.includes(role));
    const entropy = trainer === undefined ? undefined : metrics.scalars?.[`role/${trainer.name}/entropy`];
    const validationSuccess = scalar('vsFixed/success');
    const report = monitor.observe({
      iteration,
      episodes: episodes.filter((episode) => episode.role === role),
      ...(entropy === undefined ? {} : { entropy }),
      ...(validationSuccess === undefined ? {} : { validationSuccess }),
      ...(rewardSpec === undefined ? {} : { rewardSpec }),
    });
    const prefixed = Object.entries(report.metrics).map(([key, value]) => [`role/${role}/${key}`, value] as const);
    metrics.scalars = { ...metrics.scalars, ...Object.fromEntries(prefixed) };
    for (const { signal, message } of report.fired)
      warn({
        iteration,
        kind: 'reward-hacking',
        message: `iteration ${iteration}: reward hacking? role ${role}: ${signal}: ${message}`,
      });
    if (report.stop) stops.push(`${role}: ${report.fired.map((f) => f.signal).join(', ')}`);
  }
  if (stops.length === 0) return undefined;
  return `the reward-hacking monitor (mode stop) saw ${stops.join('; ')} in iteration ${iteration}`;
}
