/**
 * One multi-agent iteration up to validation: each task group's line-up (live policies, or a
 * learner against league snapshots), the rollout, and one update per trainer on the live
 * trajectories of the roles it plays — snapshot-played trajectories are never trained on, and a
 * frozen role's never. Under dynamic sampling a trainer keeps only its groups whose rewards vary
 * (no refill here: the iteration's groups are what the rollout gave).
 */
import { filterGroups } from '../../algorithms/index.ts';
import { at } from '../../core/indexing.ts';
import type { Rng } from '../../core/rng.ts';
import type { Trajectory } from '../../core/types.ts';
import { multiAgentRollout, type EpisodeOutcome, type RolePlayer } from '../../rollout/multi-agent-rollout.ts';
import type { AlgorithmPreset } from '../algorithm-presets.ts';
import { replyStopStrings } from '../loop-config.ts';
import { advantagesHook } from '../rl-iteration-inputs.ts';
import { updatePolicy, type UpdateReport } from '../rl-update.ts';
import type { IterationMetrics, RlConfig } from '../rl.ts';
import type { Matchup } from './league.ts';
import type { RoleEpisode } from './role-monitor.ts';
import { roleIterationMetrics } from './role-metrics.ts';
import { rolePlayer, type RoleAssignment, type Trainer } from './role-players.ts';
import type { MultiAgentRlOptions } from './run-multi-agent-rl.ts';
import type { SnapshotPool } from './snapshot-pool.ts';

/** Each task group's players: the role map's, with league opponents put in for a league match. */
export async function roleLineups(
  players: Readonly<Record<string, RoleAssignment>>,
  matchups: readonly Matchup[],
  pool: SnapshotPool,
): Promise<Record<string, RolePlayer>[]> {
  const live = Object.fromEntries(Object.entries(players).map(([role, assignment]) => [role, rolePlayer(assignment)]));
  return Promise.all(
    matchups.map(async (matchup) => {
      if (matchup.kind === 'live') return live;
      const lineup = { ...live };
      for (const [role, id] of Object.entries(matchup.opponents))
        lineup[role] = { policy: await pool.policy(id, role) };
      return lineup;
    }),
  );
}

export interface RoleIterationInput<Task> {
  options: MultiAgentRlOptions<Task>;
  config: RlConfig;
  preset: AlgorithmPreset;
  trainers: readonly Trainer[];
  rngs: ReadonlyMap<Trainer, Rng>;
  iteration: number;
  seeds: readonly number[];
  matchups: readonly Matchup[];
  lineups: readonly Record<string, RolePlayer>[];
  learningRate: number;
  started: number;
}

export async function trainRoles<Task>(
  input: RoleIterationInput<Task>,
): Promise<{ metrics: IterationMetrics; outcomes: EpisodeOutcome[]; live: RoleEpisode[] }> {
  const { options, config, preset, iteration, seeds, matchups } = input;
  const result = await multiAgentRollout({
    env: options.env,
    roles: options.roles,
    players: (slot) => at(input.lineups, slot.taskIndex, 'line-ups'),
    seeds,
    groupSize: config.groupSize,
    maxTurns: config.maxTurns,
    maxNewTokens: config.maxNewTokens,
    temperature: config.temperature,
    stopStrings: replyStopStrings(config),
    instructions: config.systemPrompt,
    samplingSeed: config.seed * 7919 + iteration,
  });
  const taskOf = new Map(seeds.map((seed, i) => [seed, i]));
  // Each live trajectory with its episode's first observation (the monitor reads it).
  const live: RoleEpisode[] = result.trajectories.flatMap((t, i) => {
    const matchup = at(matchups, taskOf.get(t.seed) ?? -1, 'matchups');
    if (matchup.kind !== 'live' && matchup.learner !== t.role) return [];
    return [{ ...t, prompt: at(result.episodes, i, 'episode starts').prompt }];
  });
  await options.onTrajectories?.(live, iteration);
  const trained = new Map<Trainer, Trajectory[]>();
  const updates = new Map<Trainer, UpdateReport>();
  for (const trainer of input.trainers) {
    const own = trainingBatch(
      live.filter((t) => t.role !== undefined && trainer.roles.includes(t.role)),
      preset.dropUniformGroups,
    );
    trained.set(trainer, own);
    if (own.length === 0) continue;
    const { policy, reference } = trainer;
    const rng = input.rngs.get(trainer);
    if (rng === undefined) continue;
    const update = await updatePolicy({
      policy,
      reference,
      trajectories: own,
      preset,
      config,
      iteration,
      learningRate: input.learningRate,
      rng,
      onSamples: advantagesHook(options.onAdvantages, own, iteration),
    });
    updates.set(trainer, update);
  }
  const metrics = roleIterationMetrics({
    iteration,
    roles: options.roles.roles,
    live,
    trained,
    updates,
    outcomes: result.outcomes,
    stats: result.stats,
    learningRate: input.learningRate,
    seconds: (performance.now() - input.started) / 1000,
  });
  return { metrics, outcomes: result.outcomes, live };
}

/**
 * The trajectories with a policy token, less the groups with a component that could not be scored
 * (as runRl leaves them out); under dynamic sampling only the groups whose rewards vary.
 */
function trainingBatch(trajectories: readonly Trajectory[], dynamicSampling: boolean): Trajectory[] {
  const failed = new Set(trajectories.filter((t) => t.rewardFailures !== undefined).map((t) => t.groupId));
  const trainable = trajectories.filter((t) => t.lossMask.some((m) => m === 1) && !failed.has(t.groupId));
  if (!dynamicSampling) return trainable;
  const { kept } = filterGroups({
    groupIds: trainable.map((t) => t.groupId),
    rewards: trainable.map((t) => t.totalReward),
  });
  return kept.map((i) => at(trainable, i, 'trainable trajectories'));
}
