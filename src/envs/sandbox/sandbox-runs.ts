/**
 * The sandbox runs an env has in flight, so that closing the env stops them:
 *
 *   private readonly runs = new SandboxRuns();
 *   await runFunction({ …, signal: this.runs.signal });   // each run
 *   async close() { this.runs.abortAll(); }                 // kills every run in flight
 *
 * After `abortAll()` later runs get a fresh signal: the env can start another episode.
 */
export class SandboxRuns {
  private controller = new AbortController();

  /** The signal to pass to the runs started now. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Kills every run started under the current signal (their results are the failure 'aborted'). */
  abortAll(): void {
    this.controller.abort();
    this.controller = new AbortController();
  }
}
