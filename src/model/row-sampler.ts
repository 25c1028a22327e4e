/**
 * The host side of batched sampling, one step at a time: `sampleToken` per unfinished row with one
 * seeded RNG visited in row order, the stop tokens and stop strings, the streaming callback.
 */
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { ModelConfig } from './config.ts';
import type { GeneratedRow, GenerateOptions } from './generate.ts';
import { sampleToken } from './sampling.ts';

/** The host side of sampling: per-row results, which rows are done, and reused buffers. */
export class RowSampler {
  readonly rows: GeneratedRow[];
  /** The ids just sampled, one per row (0 for finished rows), [B]. */
  readonly token: Int32Array;
  active: number;
  private readonly done: boolean[];
  private readonly rng: Rng;
  private readonly stopTokens: Set<number>;
  private readonly sampleOptions: { temperature: number; topP: number };
  private readonly vocab: number;
  private readonly sampledVocab: number;
  private readonly scratch: Float64Array;
  private readonly order: Int32Array;

  /** `rows` rows, of which those from `realRows` on are filler (finished from the start). */
  constructor(config: ModelConfig, rows: number, realRows: number, private readonly options: GenerateOptions) {
    this.rows = Array.from({ length: rows }, () => ({ tokens: [], logprobs: [], text: '', finishReason: 'length' }));
    this.done = Array.from({ length: rows }, (_, b) => b >= realRows);
    this.active = realRows;
    this.token = new Int32Array(rows);
    this.rng = new Rng(options.seed ?? 0);
    this.stopTokens = new Set(options.stopTokens ?? []);
    this.sampleOptions = { temperature: options.temperature ?? 1, topP: options.topP ?? 1 };
    this.vocab = config.vocabSize;
    this.sampledVocab = Math.min(this.vocab, options.maxTokenId ?? this.vocab);
    this.scratch = new Float64Array(this.vocab);
    this.order = new Int32Array(this.vocab);
  }

  /** Samples one id for every unfinished row from logits [B, V]; marks rows that stop. */
  sample(logits: Float32Array): void {
    const V = this.vocab;
    for (let b = 0; b < this.rows.length; b++) {
      if (this.done[b]) {
        this.token[b] = 0;
        continue;
      }
      const row = at(this.rows, b, 'rows');
      const sampled = sampleToken(logits, b * V, V, this.sampleOptions, this.rng, this.scratch, this.order, this.sampledVocab);
      this.token[b] = sampled.token;
      row.tokens.push(sampled.token);
      row.logprobs.push(sampled.logprob);
      this.options.onToken?.(b, sampled.token, sampled.logprob);
      if (this.stopTokens.has(sampled.token) || hitsStopString(row.tokens, this.options)) {
        row.finishReason = 'stop';
        this.done[b] = true;
        this.active--;
      }
    }
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
