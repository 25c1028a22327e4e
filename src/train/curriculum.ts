/**
 * A curriculum over a finite pool of train tasks: each task keeps a difficulty estimate across
 * iterations, and tasks whose next group is likely uniform — all episodes solve it, or none does —
 * are sampled less, since a uniform group has zero GRPO advantage and trains nothing.
 *
 * Task i has been played n_i episodes with s_i successes. Its success probability is estimated by
 * the Beta(1, 1) posterior mean p_i = (s_i + 1) / (n_i + 2), and it is drawn with weight
 *
 *   w_i = max(floor, 1 − p_i^G − (1 − p_i)^G)
 *
 * — the probability that a group of G episodes is *not* uniform (an unseen task: p = ½, the
 * highest weight). `floor` keeps every task reachable, so an estimate can recover. Draws within a
 * generation batch are weighted sampling without replacement (Efraimidis & Spirakis 2006: key
 * u^(1/w), the largest keys win), from an RNG fixed by the run seed, the iteration and the batch:
 * a resumed run draws the same tasks from the same estimates.
 *
 * The peers: prime-rl's DifficultyPool (problems bucketed easy / normal / hard by their rollouts'
 * reward and sampled by bucket ratios) and tinker-cookbook's removal of constant-reward groups.
 * DAPO's dynamic sampling (rl-collect.ts) throws uniform groups away *after* generating them; the
 * curriculum avoids generating them.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { Rng } from '../core/rng.ts';
import type { Trajectory } from '../core/types.ts';
import { splitSeed } from '../envs/split.ts';

export const curriculumConfigShape = {
  curriculumPool: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe(
      'curriculum: 0 = fresh train tasks every iteration; N = a pool of N train tasks, each drawn by its chance of a non-uniform group',
    ),
  curriculumFloor: z
    .number()
    .gt(0)
    .max(1)
    .default(0.05)
    .describe('curriculum: the least sampling weight of a task (keeps solved and unsolved tasks reachable)'),
} as const;

/** Per-task counts, JSON-safe (part of the RL resume state): [seed, episodes, successes]. */
export interface CurriculumState {
  tasks: [seed: number, episodes: number, successes: number][];
}

export interface CurriculumOptions {
  runSeed: number;
  poolSize: number;
  /** Episodes per task in a group (G). */
  groupSize: number;
  floor: number;
  state?: CurriculumState;
}

export class Curriculum {
  private readonly pool: number[];
  private readonly counts = new Map<number, { episodes: number; successes: number }>();

  constructor(private readonly options: CurriculumOptions) {
    // The pool is the first N tasks of the run's fresh-task stream (rl-collect.ts iterationSeeds).
    this.pool = Array.from({ length: options.poolSize }, (_, i) =>
      splitSeed('train', (options.runSeed * 1_000_003 + i) % 1_000_000_000),
    );
    for (const [seed, episodes, successes] of options.state?.tasks ?? [])
      this.counts.set(seed, { episodes, successes });
  }

  /** The pool's size. */
  get size(): number {
    return this.pool.length;
  }

  /** The estimated success probability of a task (Beta(1, 1) posterior mean). */
  successEstimate(seed: number): number {
    const count = this.counts.get(seed);
    return ((count?.successes ?? 0) + 1) / ((count?.episodes ?? 0) + 2);
  }

  /** The task's sampling weight: the chance a group of G is not uniform, at least `floor`. */
  weight(seed: number): number {
    const p = this.successEstimate(seed);
    const g = this.options.groupSize;
    return Math.max(this.options.floor, 1 - p ** g - (1 - p) ** g);
  }

  /** `count` distinct tasks for an iteration's generation batch, none of `exclude`. */
  sample(iteration: number, batch: number, count: number, exclude: ReadonlySet<number> = new Set()): number[] {
    const rng = new Rng((this.options.runSeed * 7_919 + iteration * 104_729 + batch * 1_299_709) % 4_294_967_296);
    const keyed = this.pool
      .filter((seed) => !exclude.has(seed))
      .map((seed) => ({ seed, key: Math.log(1 - rng.next()) / this.weight(seed) }));
    // log(u)/w orders as u^(1/w); the largest keys are the draw.
    keyed.sort((a, b) => b.key - a.key || a.seed - b.seed);
    return keyed.slice(0, count).map((entry) => entry.seed);
  }

  /** Counts a batch's episodes into their tasks' estimates. */
  observe(trajectories: readonly Trajectory[]): void {
    for (const trajectory of trajectories) {
      const count = this.counts.get(trajectory.seed) ?? { episodes: 0, successes: 0 };
      count.episodes += 1;
      if (trajectory.success) count.successes += 1;
      this.counts.set(trajectory.seed, count);
    }
  }

  state(): CurriculumState {
    return { tasks: [...this.counts].map(([seed, c]) => [seed, c.episodes, c.successes]) };
  }

  /** `curriculum/*` metrics: tasks played so far, and the pool's share estimated solved (p > 0.9) or unsolved (p < 0.1). */
  metrics(): Record<string, number> {
    let solved = 0;
    let unsolved = 0;
    for (const seed of this.counts.keys()) {
      const p = this.successEstimate(seed);
      if (p > 0.9) solved += 1;
      else if (p < 0.1) unsolved += 1;
    }
    return {
      'curriculum/tasksSeen': this.counts.size,
      'curriculum/solvedShare': solved / this.pool.length,
      'curriculum/unsolvedShare': unsolved / this.pool.length,
    };
  }
}

/** The run's curriculum, or none when `curriculumPool` is 0; `state` continues a resumed run's estimates. */
export function curriculumFor(
  config: {
    curriculumPool: number;
    curriculumFloor: number;
    tasksPerIteration: number;
    groupSize: number;
    seed: number;
  },
  state: CurriculumState | undefined,
): Curriculum | undefined {
  if (config.curriculumPool === 0) return undefined;
  if (config.curriculumPool < config.tasksPerIteration) {
    throw new InvalidArgumentError(
      `curriculumPool ${config.curriculumPool} is smaller than tasksPerIteration ${config.tasksPerIteration}: the pool must hold at least one iteration's tasks`,
    );
  }
  return new Curriculum({
    runSeed: config.seed,
    poolSize: config.curriculumPool,
    groupSize: config.groupSize,
    floor: config.curriculumFloor,
    state,
  });
}
