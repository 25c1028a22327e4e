/**
 * The rollout side of the asynchronous trainer: a producer that keeps generating groups (one task
 * × G episodes, always whole: GRPO normalises within a group) into a queue the trainer takes
 * from, in completion order. Two gates bound it, after AReaL (arXiv:2505.24298 §5.1):
 *
 *   capacity   queued + in flight ≤ (k + 1) · T                       (the queue's bound)
 *   staleness  accepted groups started ≤ (v − v₀ + k + 1) · T           (no work that would arrive > k versions old)
 *
 * with T = tasksPerIteration, k = maxStaleness, v the current policy version and v₀ the version the
 * producer started at; a group the trainer discards (stale, or uniform under dynamic sampling)
 * frees its place. Each group is tagged with the version current when its generation started
 * (`Trajectory.policyVersion`). With an `exclusive` lock (the sampler is the trained policy),
 * a generation and an update never overlap, so the tag is exact.
 */
import type { Trajectory } from '../core/types.ts';
import type { AsyncLock } from './rl-async-lock.ts';

export interface ProducedGroup {
  /** Index in the run's task stream. */
  index: number;
  /** Policy version current when the group's generation started. */
  version: number;
  trajectories: Trajectory[];
  /** Each episode's first observation, when the generation knows it (the monitor reads it). */
  prompts: (string | undefined)[];
}

/** One group's episodes and their first observations (undefined where the generation has none). */
export interface GeneratedGroup {
  trajectories: Trajectory[];
  prompts?: (string | undefined)[];
}

export interface GroupProducerOptions {
  /** Generates group `index` of the task stream (its task and sampling seeds fixed by the index). */
  generate: (index: number) => Promise<GeneratedGroup | Trajectory[]>;
  tasksPerIteration: number;
  maxStaleness: number;
  groupsInFlight: number;
  /** Version of the weights when the producer starts (the resumed iteration). */
  version: number;
  nextGroup: number;
  /** Groups to generate first (started and not trained before a resume). */
  pendingGroups?: readonly number[];
  /** Taken around each generation when the sampler is the trained policy. */
  exclusive?: AsyncLock;
}

export class GroupProducer {
  readonly capacity: number;
  private version: number;
  private readonly startVersion: number;
  private nextGroup: number;
  private readonly redo: number[];
  private readonly queue: ProducedGroup[] = [];
  private readonly inFlight = new Map<number, Promise<void>>();
  private accepted = 0;
  /** Taken by the trainer, neither accepted nor discarded yet. */
  private undecided = 0;
  private failure: { error: unknown } | undefined;
  private stopped = false;
  private waiter: (() => void) | undefined;
  private idleSince: number | undefined = performance.now();
  private idleMs = 0;
  private maxDepth = 0;

  constructor(private readonly options: GroupProducerOptions) {
    this.capacity = (options.maxStaleness + 1) * options.tasksPerIteration;
    this.version = options.version;
    this.startVersion = options.version;
    this.nextGroup = options.nextGroup;
    this.redo = [...(options.pendingGroups ?? [])];
  }

  /** Starts generating (as many groups as the gates allow). */
  start(): void {
    this.pump();
  }

  /** The next finished group, in completion order; waits for one; rethrows the producer's error. */
  async take(): Promise<ProducedGroup> {
    for (;;) {
      if (this.failure !== undefined) throw this.failure.error;
      const group = this.queue.shift();
      if (group !== undefined) {
        this.undecided++;
        return group;
      }
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  /** A taken group the trainer will train on (it keeps its place under the staleness gate). */
  accept(): void {
    this.undecided--;
    this.accepted++;
    this.pump();
  }

  /** A taken group the trainer will not train on (too stale, or uniform rewards): its place is freed. */
  discard(): void {
    this.undecided--;
    this.pump();
  }

  /** The weights of `version` are what the sampler now uses: groups started from now on carry it. */
  publish(version: number): void {
    this.version = version;
    this.pump();
  }

  /** Stops starting groups and waits for those in flight (their errors are ignored: the run is over). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight.values()]);
  }

  /** Groups started and not yet taken (in flight, then queued), for the resume state. */
  pending(): number[] {
    return [...this.redo, ...this.inFlight.keys(), ...this.queue.map((g) => g.index)].sort((a, b) => a - b);
  }

  /** Where the task stream continues. */
  next(): number {
    return this.nextGroup;
  }

  get queueDepth(): number {
    return this.queue.length;
  }

  /** The largest queue depth and the producer's idle milliseconds (nothing in flight) since the last call. */
  drainCounters(): { maxQueueDepth: number; idleSeconds: number } {
    const now = performance.now();
    const idleMs = this.idleMs + (this.idleSince === undefined ? 0 : now - this.idleSince);
    if (this.idleSince !== undefined) this.idleSince = now;
    const counters = { maxQueueDepth: this.maxDepth, idleSeconds: idleMs / 1000 };
    this.idleMs = 0;
    this.maxDepth = this.queue.length;
    return counters;
  }

  private canStart(): boolean {
    const { groupsInFlight, tasksPerIteration, maxStaleness } = this.options;
    if (this.stopped || this.failure !== undefined) return false;
    if (this.inFlight.size >= groupsInFlight) return false;
    if (this.inFlight.size + this.queue.length >= this.capacity) return false;
    // Accepted groups, plus those not yet judged (in flight or queued), against the versions allowed.
    const started = this.accepted + this.undecided + this.inFlight.size + this.queue.length;
    return started < (this.version - this.startVersion + maxStaleness + 1) * tasksPerIteration;
  }

  private pump(): void {
    while (this.canStart()) {
      const index = this.redo.shift() ?? this.nextGroup++;
      if (this.idleSince !== undefined) {
        this.idleMs += performance.now() - this.idleSince;
        this.idleSince = undefined;
      }
      // Started on the next microtask, so the generation is in `inFlight` before it can finish.
      this.inFlight.set(
        index,
        Promise.resolve().then(() => this.run(index)),
      );
    }
  }

  private async run(index: number): Promise<void> {
    const release = this.options.exclusive === undefined ? undefined : await this.options.exclusive.acquire();
    try {
      const version = this.version;
      const generated = this.stopped ? [] : await this.options.generate(index);
      const { trajectories, prompts = [] } = Array.isArray(generated) ? { trajectories: generated } : generated;
      for (const trajectory of trajectories) trajectory.policyVersion = version;
      // Queued even after stop(): pending() still lists it for the resume state.
      this.queue.push({ index, version, trajectories, prompts: trajectories.map((_, i) => prompts[i]) });
      this.maxDepth = Math.max(this.maxDepth, this.queue.length);
    } catch (error) {
      this.failure ??= { error };
    } finally {
      release?.();
      this.inFlight.delete(index);
      if (this.inFlight.size === 0) this.idleSince = performance.now();
      this.waiter?.();
      this.waiter = undefined;
      this.pump();
    }
  }
}
