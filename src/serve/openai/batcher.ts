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
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { GeneratedRow } from '../../model/generate.ts';

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
}

/** A generated row: ids (stop id included), log-probs and why it ended. */
export type BatchRow = Omit<GeneratedRow, 'text'>;

interface Waiting extends BatchJob {
  key: string;
  resolve(row: BatchRow): void;
  reject(error: unknown): void;
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
  private running = false;
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
      this.queue.push({ ...job, key: JSON.stringify(job.sampling), resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.running || this.timer !== null || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runBatch();
    }, this.windowMs);
  }

  private async runBatch(): Promise<void> {
    this.running = true;
    const key = at(this.queue, 0, 'batch queue').key;
    const jobs: Waiting[] = [];
    for (let i = 0; i < this.queue.length && jobs.length < this.maxBatchSize; ) {
      if (at(this.queue, i, 'batch queue').key === key) jobs.push(at(this.queue.splice(i, 1), 0, 'batch queue'));
      else i++;
    }
    const sampling = at(jobs, 0, 'batch jobs').sampling;
    const maxNewTokens = jobs.reduce((most, job) => Math.max(most, job.maxNewTokens), 0);
    const seed = sampling.seed ?? this.batches;
    this.batches++;
    this.onBatch?.(jobs.length);
    const counts = jobs.map(() => 0);
    try {
      const rows = await this.generate(
        jobs.map((job) => job.prompt),
        {
          ...sampling,
          seed,
          maxNewTokens,
          onToken: (row, token, logprob) => {
            const job = jobs[row];
            // Ids past a row's own limit are cut below; they are never streamed.
            const count = counts[row] ?? 0;
            if (job?.onToken !== undefined && count < job.maxNewTokens) job.onToken(token, logprob);
            counts[row] = count + 1;
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
      for (const job of jobs) job.reject(error);
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}
