/**
 * What a running batch has handed each of its rows so far, and whether anyone still waits for the
 * generation: a row is settled once its client left (its `signal` aborted) or it holds all it
 * will get (its own `maxNewTokens`, or a stop id last). When every row is settled and at least one
 * client left, the rest of the batch would run for nobody: the batcher stops it (`stopped`) and
 * answers the complete rows from what they were handed, the same ids and log-probs the whole
 * generation would have given them. `signal` carries the same news to the policy (aborted, with a
 * `BatchStopped`, once nobody waits): one that does not stream, such as an `OpenAIPolicy`, cancels
 * its upstream requests when the batch's last client leaves. `dispose()` when the batch ends.
 */
import type { BatchJob, BatchRow } from './batcher.ts';
import { GenerationAbandonedError } from './served-policy-errors.ts';

/** Thrown through the generator's `onToken` to end a batch nobody waits for (what the policy's `generateBatch` rejects with); the batcher catches its own. */
export class BatchStopped extends GenerationAbandonedError {
  constructor(rows: number) {
    super(`the batch was stopped: none of its ${rows} rows waits for more ids`, { rows });
  }
}

export class BatchRows {
  private readonly rows: { tokens: number[]; logprobs: number[] }[];
  private readonly controller = new AbortController();
  private readonly onClientLeft = (): void => {
    if (this.nobodyWaits()) this.controller.abort(new BatchStopped(this.jobs.length));
  };

  constructor(
    private readonly jobs: readonly BatchJob[],
    private readonly stopTokens: readonly number[],
  ) {
    this.rows = jobs.map(() => ({ tokens: [], logprobs: [] }));
    for (const job of jobs) job.signal?.addEventListener('abort', this.onClientLeft, { once: true });
    this.onClientLeft(); // a client that left before the batch began
  }

  /** Aborted (reason: a `BatchStopped`) once a client leaves and nobody waits any more (see the header): the generator's `signal`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops watching the jobs' signals (the batch ended). */
  dispose(): void {
    for (const job of this.jobs) job.signal?.removeEventListener('abort', this.onClientLeft);
  }

  /** Records `token` of `row`; false for ids past the row's own limit (cut, never streamed). */
  take(row: number, token: number, logprob: number): boolean {
    const own = this.rows[row];
    const job = this.jobs[row];
    if (own === undefined || job === undefined || own.tokens.length >= job.maxNewTokens) return false;
    own.tokens.push(token);
    own.logprobs.push(logprob);
    return true;
  }

  /** Every row settled, and at least one because its client left (see the header). */
  nobodyWaits(): boolean {
    const left = this.jobs.some((job) => job.signal?.aborted === true);
    return left && this.jobs.every((job, row) => job.signal?.aborted === true || this.complete(row));
  }

  /** Row `row` as far as it was handed: complete rows end as the whole generation would have ended them. */
  handed(row: number): BatchRow {
    const { tokens, logprobs } = this.rows[row] ?? { tokens: [], logprobs: [] };
    const last = tokens[tokens.length - 1];
    const stopped = last !== undefined && this.stopTokens.includes(last);
    return { tokens, logprobs, finishReason: stopped ? 'stop' : 'length' };
  }

  private complete(row: number): boolean {
    const { tokens } = this.rows[row] ?? { tokens: [] };
    const last = tokens[tokens.length - 1];
    return (
      tokens.length >= (this.jobs[row]?.maxNewTokens ?? 0) || (last !== undefined && this.stopTokens.includes(last))
    );
  }
}
