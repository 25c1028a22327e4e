/**
 * The host side of batched sampling, one step at a time: `sampleToken` per unfinished row with one
 * seeded RNG visited in row order, the stop tokens and stop strings, the streaming callback. Used by
 * the engine's sampler (engine/onnx/onnx-generate.ts).
 */
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { GeneratedRow, GenerateOptions } from './generate-options.ts';
import { sampleToken } from './sampling.ts';

/**
 * The host side of sampling: which rows are done, the sampler's options and reused buffers. Rows
 * from `realRows` on are filler (finished from the start). Results go into `rows`.
 */
export class RowSampler {
  private readonly done: boolean[];
  private active: number;
  private readonly rng: Rng;
  private readonly stopTokens: Set<number>;
  private readonly sampleOptions: { temperature: number; topP: number };
  private readonly sampledVocab: number;
  private readonly order: Int32Array;

  constructor(
    private readonly rows: GeneratedRow[],
    private readonly options: GenerateOptions,
    private readonly vocab: number,
    realRows: number = rows.length,
  ) {
    this.done = rows.map((_, b) => b >= realRows);
    this.active = Math.min(realRows, rows.length);
    this.rng = new Rng(options.seed ?? 0);
    this.stopTokens = new Set(options.stopTokens ?? []);
    this.sampleOptions = { temperature: options.temperature ?? 1, topP: options.topP ?? 1 };
    this.sampledVocab = Math.min(vocab, options.maxTokenId ?? vocab);
    this.order = new Int32Array(vocab);
  }

  /**
   * The inverse temperature the engine computes these rows' probabilities at (1 for greedy: the
   * argmax is the same at any temperature).
   */
  get inverseTemperature(): number {
    const { temperature } = this.sampleOptions;
    return temperature > 0 ? 1 / temperature : 1;
  }

  /**
   * Samples every unfinished row from probabilities [B, V] (at `inverseTemperature`) into `token`
   * (0 for finished rows); returns the rows still active.
   */
  sample(probabilities: Float32Array, token: Int32Array): number {
    const V = this.vocab;
    for (let b = 0; b < this.rows.length; b++) {
      if (this.done[b]) {
        token[b] = 0;
        continue;
      }
      const sampled = sampleToken(probabilities, b * V, V, this.sampleOptions, this.rng, this.order, this.sampledVocab);
      token[b] = sampled.token;
      const row = at(this.rows, b, 'rows');
      row.tokens.push(sampled.token);
      row.logprobs.push(sampled.logprob);
      this.options.onToken?.(b, sampled.token, sampled.logprob);
      if (this.stopTokens.has(sampled.token) || hitsStopString(row.tokens, this.options)) {
        row.finishReason = 'stop';
        this.done[b] = true;
        this.active--;
      }
    }
    return this.active;
  }
}

export function hitsStopString(tokens: readonly number[], options: GenerateOptions): boolean {
  const { stopStrings, decode } = options;
  if (!stopStrings || stopStrings.length === 0 || decode === undefined) return false;
  // Only the tail can newly contain a stop string; decode a window long enough for the longest.
  const longest = Math.max(...stopStrings.map((s) => s.length));
  const tail = decode(tokens.slice(-4 * longest - 4));
  return stopStrings.some((s) => tail.includes(s));
}
