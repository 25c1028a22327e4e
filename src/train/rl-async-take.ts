/**
 * The trainer side of an asynchronous iteration: take whole groups from the producer, in the
 * order they finished, until `tasksPerIteration` are accepted. A group whose staleness
 * (trainer version − its policyVersion) exceeds maxStaleness is dropped, or re-scored under the
 * trainer's current weights (`staleTrajectories: 'rescore'`); under dynamic sampling (DAPO) a
 * group whose rewards do not vary is discarded, and at most tasksPerIteration ×
 * maxGenerationBatches groups are taken (as the synchronous loop's refills, rl-collect.ts).
 */
import type { Trajectory } from '../core/types.ts';
import { filterGroups } from '../algorithms/index.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { rolloutStats } from '../rollout/index.ts';
import type { AsyncLock } from './rl-async-lock.ts';
import type { GroupProducer, ProducedGroup } from './rl-async-producer.ts';
import type { IterationBatch } from './rl-collect.ts';
import type { RlConfig } from './rl.ts';

export interface TakenIteration {
  batch: IterationBatch;
  /** Staleness of each kept trajectory (after re-scoring). */
  staleness: number[];
  /** Trajectories dropped as too stale. */
  dropped: number;
  /** Trajectories re-scored under the trainer's weights. */
  rescored: number;
  /** Seconds the trainer waited for a finished group. */
  idleSeconds: number;
}

export async function takeIteration({
  producer,
  policy,
  config,
  dynamicSampling,
  trainerVersion,
  exclusive,
}: {
  producer: GroupProducer;
  policy: TrainablePolicy;
  config: RlConfig;
  dynamicSampling: boolean;
  trainerVersion: number;
  exclusive: AsyncLock | undefined;
}): Promise<TakenIteration> {
  const started = performance.now();
  const generated: Trajectory[] = [];
  const generatedPrompts: (string | undefined)[] = [];
  const kept: Trajectory[] = [];
  const counts = { staleness: [] as number[], dropped: 0, rescored: 0, idleSeconds: 0 };
  const { tasksPerIteration, maxGenerationBatches } = config;
  const maxTaken = dynamicSampling ? tasksPerIteration * maxGenerationBatches : Number.POSITIVE_INFINITY;
  let accepted = 0;
  let taken = 0;
  while (accepted < tasksPerIteration && taken < maxTaken) {
    const waitStarted = performance.now();
    const group = await producer.take();
    counts.idleSeconds += (performance.now() - waitStarted) / 1000;
    generated.push(...group.trajectories);
    generatedPrompts.push(...group.prompts);
    if (trainerVersion - group.version > config.async.maxStaleness) {
      if (config.async.staleTrajectories === 'drop') {
        counts.dropped += group.trajectories.length;
        producer.discard();
        continue;
      }
      await rescore(policy, group, trainerVersion, config.temperature, exclusive);
      counts.rescored += group.trajectories.length;
    }
    taken++;
    // A group with a reward failure (src/rewards/trajectory-scoring.ts) is left out, as rl-collect.ts does.
    const failed = group.trajectories.some((t) => t.rewardFailures !== undefined);
    const trainable = failed ? [] : group.trajectories.filter((t) => t.lossMask.some((m) => m === 1));
    if (failed || (dynamicSampling && !varies(trainable))) {
      producer.discard();
      continue;
    }
    accepted++;
    producer.accept();
    kept.push(...trainable);
    for (const t of trainable) counts.staleness.push(trainerVersion - (t.policyVersion ?? trainerVersion));
  }
  const batch: IterationBatch = {
    generated,
    generatedPrompts,
    stats: rolloutStats(generated, (performance.now() - started) / 1000),
    kept,
    keptGroups: accepted,
    generationBatches: Math.max(1, Math.ceil(taken / tasksPerIteration)),
  };
  return { batch, ...counts };
}

function varies(trainable: readonly Trajectory[]): boolean {
  return (
    filterGroups({ groupIds: trainable.map((t) => t.groupId), rewards: trainable.map((t) => t.totalReward) })
      .keptGroups > 0
  );
}

/**
 * Replaces a stale group's behaviour log-probs by the trainer's at its current weights (each
 * whole trajectory, and each bounded-history segment), and tags it with the trainer's version.
 */
async function rescore(
  policy: TrainablePolicy,
  group: ProducedGroup,
  version: number,
  temperature: number,
  exclusive: AsyncLock | undefined,
): Promise<void> {
  const score = (sequences: number[][]) =>
    exclusive === undefined
      ? policy.logprobs({ sequences, temperature })
      : exclusive.with(() => policy.logprobs({ sequences, temperature }));
  const rows = group.trajectories.flatMap((t) => [t, ...(t.segments ?? [])]);
  const scored = await score(rows.map((row) => row.tokens));
  rows.forEach((row, i) => {
    const logprobs = scored[i];
    if (logprobs === undefined) return;
    row.logprobs = row.lossMask.map((m, j) => (m === 1 ? (logprobs[j] ?? 0) : 0));
  });
  for (const t of group.trajectories) t.policyVersion = version;
}
