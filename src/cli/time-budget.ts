/**
 * `agentrl train --max-minutes <m>`: a wall-clock budget for this session of a run. The warm start
 * (and STaR round) and the held-out tests are never cut; the RL iterations stop early, after a
 * finished and saved iteration, when one more iteration and what follows the last one (the test after
 * RL, the final validation and checkpoints) would pass the budget. At least one iteration runs.
 *
 * The cost of what follows is estimated from this session's own timings: the held-out test before
 * RL plays the same seeds as the one after it; on a resumed run that did not time it, each of the
 * test's episodes is counted at the longest iteration's time per episode (rollout and update: an
 * overestimate, never an under-run).
 */
export interface TimeBudgetSettings {
  /** The budget in minutes. */
  maxMinutes: number;
  /** Episodes of the held-out test after RL. */
  testEpisodes: number;
  /** Episodes an RL iteration plays. */
  episodesPerIteration: number;
}

/** Seconds kept for the last checkpoint folders and the final validation, besides the test. */
export const budgetMarginSeconds = 60;

export class TimeBudget {
  private testSeconds: number | undefined;
  private longestIteration = 0;
  private lastMark: number | undefined;

  /** `started`: when this session began (the clock's milliseconds); `now`: the clock, injectable for tests. */
  constructor(
    private readonly settings: TimeBudgetSettings,
    private readonly started: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The held-out test before RL took `seconds` in this session. */
  testTook(seconds: number): void {
    this.testSeconds = seconds;
  }

  /** The RL iterations start now. */
  iterationsStart(): void {
    this.lastMark = this.now();
  }

  /**
   * Called once per iteration, after its update: whether the next iteration and what follows the
   * last one would pass the budget (the iteration's time counts from the previous call, so its
   * checkpoint and commit are in it).
   */
  exhausted(): boolean {
    const now = this.now();
    this.longestIteration = Math.max(this.longestIteration, (now - (this.lastMark ?? now)) / 1000);
    this.lastMark = now;
    return this.elapsedSeconds() + this.longestIteration + this.afterRlSeconds() > this.settings.maxMinutes * 60;
  }

  /** What a budget stop prints. */
  describe(): string {
    return (
      `the time budget (--max-minutes ${this.settings.maxMinutes}): ${Math.round(this.elapsedSeconds() / 60)} min in, ` +
      `another iteration (~${Math.round(this.longestIteration)} s) and the test after RL (~${Math.round(this.afterRlSeconds())} s with the saves) would not fit`
    );
  }

  private elapsedSeconds(): number {
    return (this.now() - this.started) / 1000;
  }

  private afterRlSeconds(): number {
    const test =
      this.testSeconds ??
      (this.longestIteration * this.settings.testEpisodes) / Math.max(1, this.settings.episodesPerIteration);
    return test + budgetMarginSeconds;
  }
}
