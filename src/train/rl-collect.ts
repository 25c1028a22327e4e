/**
 * An iteration's training batch. One generation batch is `tasksPerIteration` fresh tasks × G
 * episodes (the env rollout, or a `collect` scaffold). Trajectories without a policy token are
 * left out. With dynamic sampling (DAPO, arXiv:2503.14476; verl `algorithm.filter_groups`), groups
 * whose rewards do not vary are dropped and further batches of fresh tasks are generated until
 * `tasksPerIteration` varying groups are found or `maxGenerationBatches` batches were generated
 * (verl `max_num_gen_batches`); the batch is then cut to that many groups, in generation order
 * (verl `batch[:train_batch_size · n]`). Groups of one are kept, as verl keeps them
 * (../algorithms/dynamic-sampling.ts). Where verl raises when the batches run out, this returns
 * the groups it found and the trainer warns.
 */
import { at } from '../core/indexing.ts';
import type { Trajectory } from '../core/types.ts';
import { filterGroups } from '../algorithms/index.ts';
import { splitSeed } from '../envs/split.ts';
import { rolloutStats, type RolloutStats } from '../rollout/index.ts';
import { withoutFailedGroups } from '../rewards/trajectory-scoring.ts';
import type { Curriculum } from './curriculum.ts';

/** The train-split task seeds of an iteration: fresh tasks every iteration, fixed by the run seed. */
export function iterationSeeds(runSeed: number, iteration: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) =>
    splitSeed('train', (runSeed * 1_000_003 + (iteration - 1) * count + i) % 1_000_000_000),
  );
}

/** Where the seeds of refill batches start (far from the first batches' stream). */
const REFILL_STREAM_OFFSET = 500_000_000;

/**
 * The task seeds of an iteration's `batch`-th generation batch: batch 0 is `iterationSeeds`;
 * refill batches (dynamic sampling) draw from a second stream, fixed by the run seed, the
 * iteration and the batch, so a resumed run regenerates the same tasks.
 */
export function generationBatchSeeds(
  runSeed: number,
  iteration: number,
  batch: number,
  count: number,
  maxBatches: number,
): number[] {
  if (batch === 0) return iterationSeeds(runSeed, iteration, count);
  const first = runSeed * 1_000_003 + REFILL_STREAM_OFFSET + ((iteration - 1) * maxBatches + batch - 1) * count;
  return Array.from({ length: count }, (_, i) => splitSeed('train', (first + i) % 1_000_000_000));
}

export interface IterationBatch {
  /** Every generated trajectory, in generation order (what `onTrajectories` sees). */
  generated: Trajectory[];
  /** The first observation's text of each generated trajectory, aligned with `generated` (undefined where the generator did not say). */
  generatedPrompts: (string | undefined)[];
  /** Rollout statistics over every generated trajectory. */
  stats: RolloutStats;
  /** The trajectories the update trains on. */
  kept: Trajectory[];
  /** Groups in `kept`. */
  keptGroups: number;
  generationBatches: number;
}

export interface CollectIterationOptions {
  /** Generates one batch: the trajectories of `seeds` (G per seed, a shared groupId per seed) and their statistics. */
  generate: (
    seeds: number[],
    batch: number,
  ) => Promise<{
    trajectories: Trajectory[];
    stats: RolloutStats;
    seconds: number;
    /** Each trajectory's start (the rollout's `episodes`), aligned with `trajectories`. */
    episodes?: readonly { prompt: string }[];
  }>;
  runSeed: number;
  iteration: number;
  tasksPerIteration: number;
  /** Drop groups whose rewards do not vary, and refill (DAPO). */
  dynamicSampling: boolean;
  maxGenerationBatches: number;
  /** Draw the tasks from a curriculum's pool (curriculum.ts) instead of fresh seeds; it learns from every generated episode. */
  curriculum?: Curriculum;
}

export async function collectIteration(options: CollectIterationOptions): Promise<IterationBatch> {
  const { generate, runSeed, iteration, tasksPerIteration, dynamicSampling } = options;
  const maxBatches = dynamicSampling ? options.maxGenerationBatches : 1;
  const generated: Trajectory[] = [];
  const generatedPrompts: (string | undefined)[] = [];
  const kept: Trajectory[] = [];
  const usedSeeds = new Set<number>();
  let keptGroups = 0;
  let seconds = 0;
  let firstStats: RolloutStats | undefined;
  let batch = 0;
  while (batch < maxBatches && (batch === 0 || keptGroups < tasksPerIteration)) {
    // A seed seen earlier in the iteration would merge two groups under one groupId.
    const seeds = options.curriculum
      ? options.curriculum.sample(iteration, batch, tasksPerIteration, usedSeeds)
      : generationBatchSeeds(runSeed, iteration, batch, tasksPerIteration, maxBatches).filter(
          (seed) => !usedSeeds.has(seed),
        );
    // A curriculum's pool can run dry under refills.
    if (seeds.length === 0) break;
    for (const seed of seeds) usedSeeds.add(seed);
    const result = await generate(seeds, batch);
    options.curriculum?.observe(result.trajectories);
    firstStats ??= result.stats;
    seconds += result.seconds;
    generated.push(...result.trajectories);
    generatedPrompts.push(...result.trajectories.map((_, i) => result.episodes?.[i]?.prompt));
    // A group with a reward failure (src/rewards/trajectory-scoring.ts) is left out, never scored 0.
    const trainable = withoutFailedGroups(result.trajectories).filter((t) => t.lossMask.some((m) => m === 1));
    if (dynamicSampling) {
      const filtered = filterGroups({
        groupIds: trainable.map((t) => t.groupId),
        rewards: trainable.map((t) => t.totalReward),
      });
      kept.push(...filtered.kept.map((i) => at(trainable, i, 'trainable trajectories')));
      keptGroups += filtered.keptGroups;
    } else {
      kept.push(...trainable);
      keptGroups += new Set(trainable.map((t) => t.groupId)).size;
    }
    batch += 1;
  }
  const trimmed = dynamicSampling ? firstGroups(kept, tasksPerIteration) : kept;
  return {
    generated,
    generatedPrompts,
    // One batch keeps the rollout's own statistics (and timing); several are summed up anew.
    stats: batch === 1 ? firstStats! : rolloutStats(generated, seconds),
    kept: trimmed,
    keptGroups: Math.min(keptGroups, dynamicSampling ? tasksPerIteration : keptGroups),
    generationBatches: batch,
  };
}

/** The trajectories of the first `count` groups (by first appearance), in order. */
function firstGroups(trajectories: readonly Trajectory[], count: number): Trajectory[] {
  const groups = new Set<string>();
  return trajectories.filter((t) => {
    if (groups.has(t.groupId)) return true;
    if (groups.size >= count) return false;
    groups.add(t.groupId);
    return true;
  });
}
