/**
 * A multi-agent iteration's metrics: the usual `IterationMetrics` (over every role's trajectories;
 * update numbers averaged over the trainers) and, under `scalars`, each role's own series —
 * `role/<role>/{reward,success,episodes,trained,trainedTokens,invalidActionRate}` from its live
 * trajectories and `role/<trainer>/{loss,pgLoss,entropy,gradNorm,klToReference,approxKl,clipfrac}`
 * from its trainer's update, `role/<role>/reward/<component>`, `role/<role>/reward/<component>/failures`
 * and `role/<role>/rewardFailures` from the env's components of the steps that paid the role (and
 * `reward/<component>` over all roles, as a single-agent run reports) — which the run store, trackers and the dashboard record as they are.
 */
import type { Trajectory } from '../../core/types.ts';
import { rewardComponentMetrics } from '../../rewards/component-metrics.ts';
import type { EpisodeOutcome } from '../../rollout/multi-agent-rollout.ts';
import type { RolloutStats } from '../../rollout/stats.ts';
import type { UpdateReport } from '../rl-update.ts';
import type { IterationMetrics } from '../rl.ts';
import type { Trainer } from './role-players.ts';

export interface RoleIteration {
  iteration: number;
  roles: readonly string[];
  /** Every role trajectory a live policy played (snapshots' left out). */
  live: readonly Trajectory[];
  /** The trajectories each trainer trained on. */
  trained: ReadonlyMap<Trainer, readonly Trajectory[]>;
  updates: ReadonlyMap<Trainer, UpdateReport>;
  outcomes: readonly EpisodeOutcome[];
  stats: RolloutStats;
  learningRate: number;
  seconds: number;
}

const updateKeys = ['loss', 'pgLoss', 'entropy', 'gradNorm', 'klToReference', 'approxKl', 'ppoKl', 'clipfrac'] as const;

export function roleIterationMetrics(input: RoleIteration): IterationMetrics {
  const { iteration, live, trained, updates, outcomes, stats } = input;
  const scalars: Record<string, number> = { ...rewardComponentMetrics(live) };
  for (const role of input.roles) {
    const own = live.filter((t) => t.role === role);
    if (own.length === 0) continue;
    for (const [key, value] of Object.entries(rewardComponentMetrics(own))) scalars[`role/${role}/${key}`] = value;
    const turns = own.flatMap((t) => t.turns);
    scalars[`role/${role}/reward`] = mean(own.map((t) => t.totalReward));
    scalars[`role/${role}/success`] = mean(own.map((t) => (t.success ? 1 : 0)));
    scalars[`role/${role}/episodes`] = own.length;
    scalars[`role/${role}/invalidActionRate`] = mean(turns.map((turn) => (turn.invalidAction ? 1 : 0)));
  }
  for (const [trainer, trajectories] of trained) {
    for (const role of trainer.roles) {
      const own = trajectories.filter((t) => t.role === role);
      scalars[`role/${role}/trained`] = own.length;
      scalars[`role/${role}/trainedTokens`] = policyTokens(own);
    }
    const update = updates.get(trainer);
    if (update === undefined) continue;
    for (const key of updateKeys) scalars[`role/${trainer.name}/${key}`] = update[key];
  }
  const reports = [...updates.values()];
  const averaged = (key: (typeof updateKeys)[number], none: number) =>
    reports.length === 0 ? none : mean(reports.map((report) => report[key]));
  const allTrained = [...trained.values()].flat();
  return {
    iteration,
    reward: stats.meanReward,
    success: mean(outcomes.map((outcome) => (outcome.success ? 1 : 0))),
    episodes: outcomes.length,
    trained: allTrained.length,
    trainedTokens: policyTokens(allTrained),
    generationBatches: 1,
    loss: averaged('loss', NaN),
    pgLoss: averaged('pgLoss', NaN),
    klToReference: averaged('klToReference', 0),
    ppoKl: averaged('ppoKl', 0),
    approxKl: averaged('approxKl', 0),
    entropy: averaged('entropy', NaN),
    clipfrac: averaged('clipfrac', 0),
    gradNorm: averaged('gradNorm', 0),
    learningRate: input.learningRate,
    invalidActionRate: stats.invalidActionRate,
    rolloutTokensPerSecond: stats.tokensPerSecond,
    trainTokensPerSecond: reports.length === 0 ? 0 : mean(reports.map((report) => report.tokensPerSecond)),
    seconds: input.seconds,
    scalars,
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length;
}

function policyTokens(trajectories: readonly Trajectory[]): number {
  return trajectories.reduce((sum, t) => sum + t.lossMask.reduce((n, m) => n + m, 0), 0);
}
