/**
 * Dynamic batching for the policy server: requests that arrive within `windowMs` of the first
 * waiting one and share their sampling options (temperature, top-p, stop strings, seed) run in
 * ONE call of the generator — one batched forward pass per token for all of them. Rows may ask
 * for different `maxNewTokens`: the batch runs to the largest and each row is cut at its own
 * (finish reason 'length'). Requests with other options wait for the next batch.
 *
 * The built-in model's sampler is shared by the rows of a batch, so with `seed` set a request
 * replays exactly only when it runs alone; requests with different explicit seeds never share a
 * batch. Without a seed, each batch draws its own.
 *
 * Nothing runs for nobody: a job whose `signal` aborts (its client left) while it waits leaves the
 * queue; a running batch in which every row's client left or has all its ids is stopped at its
 * next sampled id (batch-rows.ts: the generator's `onToken` throws, which ends a streaming
 * policy's generation; the generator's `signal` aborts too, which cancels a non-streaming policy's
 * upstream requests). The rows that left are
 * rejected (`GenerationAbandonedError`), the complete ones answered. A row whose client is still
 * waiting for ids keeps its batch running. `close()` refuses new jobs, drops the waiting
 * ones and resolves once the running batch has ended.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { GeneratedRow } from '../../model/generate-options.ts';
import { BatchRows, BatchStopped } from './batch-rows.ts';
import { GenerationAbandonedError } from './served-policy-errors.ts';

/** Sampling options every row of a batch shares. */
export interface SharedSampling {
  temperature: number;
  topP: number;
  stopTokens: readonly number[];
  stopStrings: readonly string[];
  /** null: the batcher draws a seed per batch. */
  seed: number | null;
}

export interface TokenGeneratorOptions extends Omit<SharedSampling, 'seed'> {
  seed: number;
  maxNewTokens: number;
  onToken: (row: number, token: number, logprob: number) => void;
  /** Aborted (with a `BatchStopped`) once nobody waits for the batch: a policy that cannot stream stops here (batch-rows.ts). */
  signal?: AbortSignal;
}

/** Generates the rows of one batch (the built-in model's `generate`, or a scripted stand-in in tests). */
export type TokenGenerator = (
  prompts: readonly (readonly number[])[],
  options: TokenGeneratorOptions,
) => Promise<GeneratedRow[]>;

export interface BatchJob {
  prompt: readonly number[];
  maxNewTokens: number;
  sampling: SharedSampling;
  /** Each sampled id of this row (up to its own maxNewTokens), as it is sampled. */
  onToken?: (token: number, logprob: number) => void;
  /** Aborted when nobody waits for this row any more (its client left); see the header. */
  signal?: AbortSignal;
}

/** A generated row: ids (stop id included), log-probs and why it ended. */
export type BatchRow = Omit<GeneratedRow, 'text'>;

interface Waiting extends BatchJob {
  key: string;
  resolve(row: BatchRow): void;
  reject(error: unknown): void;
  /** Removes the abort listener once the job has left the queue. */
  forget(): void;
}

export interface BatcherOptions {
  generate: TokenGenerator;
  /** Milliseconds to wait for more requests after the first. Default 10. */
  windowMs?: number;
  /** Rows per batch at most. Default 64. */
  maxBatchSize?: number;
  /** Called with the size of each batch as it starts (metrics, tests). */
  onBatch?: (rows: number) => void;
}

export class GenerationBatcher {
  private readonly generate: TokenGenerator;
  private readonly windowMs: number;
  private readonly maxBatchSize: number;
  private readonly onBatch?: (rows: number) => void;
  private readonly queue: Waiting[] = [];
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;
  private batches = 0;

  constructor({ generate, windowMs = 10, maxBatchSize = 64, onBatch }: BatcherOptions) {
    if (!(windowMs >= 0)) throw new InvalidArgumentError(`windowMs must be >= 0, got ${windowMs}`);
    if (!Number.isInteger(maxBatchSize) || maxBatchSize < 1)
      throw new InvalidArgumentError(`maxBatchSize must be a positive integer, got ${maxBatchSize}`);
    this.generate = generate;
    this.windowMs = windowMs;
    this.maxBatchSize = maxBatchSize;
    this.onBatch = onBatch;
  }

  submit(job: BatchJob): Promise<BatchRow> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new GenerationAbandonedError('the server is closing; no new generation starts'));
      if (job.signal?.aborted === true) return reject(abandoned('before its batch began'));
      const onAbort = (): void => this.leaveQueue(waiting);
      const waiting: Waiting = {
        ...job,
        key: JSON.stringify(job.sampling),
        resolve,
        reject,
        forget: () => job.signal?.removeEventListener('abort', onAbort),
      };
      job.signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiting);
      this.schedule();
    });
  }

  /** Stops taking jobs, drops the waiting ones (a GenerationAbandonedError each) and resolves once the running batch has ended. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    for (const job of this.queue.splice(0)) {
      job.forget();
      job.reject(new GenerationAbandonedError('the server closed before this generation began'));
    }
    await this.running;
  }

  /** A waiting job whose client left: out of the queue, rejected. */
  private leaveQueue(job: Waiting): void {
    const index = this.queue.indexOf(job);
    if (index < 0) return; // already in a batch: the batch watches its signal
    this.queue.splice(index, 1);
    job.reject(abandoned('before its batch began'));
  }

  private schedule(): void {
    if (this.closed || this.running !== null || this.timer !== null || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.queue.length === 0) return; // every waiting client left during the window
      this.running = this.runBatch().finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.windowMs);
  }

  private async runBatch(): Promise<void> {
    const key = at(this.queue, 0, 'batch queue').key;
    const jobs: Waiting[] = [];
    for (let i = 0; i < this.queue.length && jobs.length < this.maxBatchSize; ) {
      if (at(this.queue, i, 'batch queue').key === key) jobs.push(at(this.queue.splice(i, 1), 0, 'batch queue'));
      else i++;
    }
    for (const job of jobs) job.forget();
    const sampling = at(jobs, 0, 'batch jobs').sampling;
    const maxNewTokens = jobs.reduce((most, job) => Math.max(most, job.maxNewTokens), 0);
    const seed = sampling.seed ?? this.batches;
    this.batches++;
    this.onBatch?.(jobs.length);
    const handed = new BatchRows(jobs, sampling.stopTokens);
    try {
      const rows = await this.generate(
        jobs.map((job) => job.prompt),
        {
          ...sampling,
          seed,
          maxNewTokens,
          signal: handed.signal,
          onToken: (row, token, logprob) => {
            if (handed.nobodyWaits()) throw new BatchStopped(jobs.length);
            if (handed.take(row, token, logprob)) jobs[row]?.onToken?.(token, logprob);
          },
        },
      );
      rows.forEach((row, i) => {
        const job = at(jobs, i, 'batch jobs');
        const own = job.maxNewTokens;
        const cut = row.tokens.length > own;
        job.resolve({
          tokens: cut ? row.tokens.slice(0, own) : row.tokens,
          logprobs: cut ? row.logprobs.slice(0, own) : row.logprobs,
          finishReason: cut ? 'length' : row.finishReason,
        });
      });
    } catch (error) {
      jobs.forEach((job, row) => {
        if (!(error instanceof BatchStopped)) job.reject(error);
        else if (job.signal?.aborted === true) job.reject(abandoned('mid-generation', { rows: jobs.length }));
        else job.resolve(handed.handed(row));
      });
    } finally {
      handed.dispose();
    }
  }
}

function abandoned(when: string, details: Record<string, unknown> = {}): GenerationAbandonedError {
  return new GenerationAbandonedError(`the generation was abandoned by its client ${when}`, details);
}
