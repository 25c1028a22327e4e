/**
 * The host side of a batch made of groups (onnx-generate.ts `generateGroupsOnOnnx`): the batch rows
 * are the groups' prompts in order, and each group samples its rows with its own options — its own
 * seeded RNG, stops, temperature, budget of new tokens — exactly as a call of its own would
 * (model/row-sampler.ts per group). One group is a plain `generate` call.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { ModelConfig } from '../../model/config.ts';
import type { GeneratedRow, GenerateOptions } from '../../model/generate-options.ts';
import { RowSampler } from '../../model/row-sampler.ts';

/** Prompts sampled with one set of options (and, on a grouped session, one adapter set). */
export interface SamplingGroup {
  prompts: readonly (readonly number[])[];
  options: GenerateOptions;
}

/** Checks a group's prompts against the window; returns its longest prompt (0 when it has none). */
function checkPrompts(prompts: readonly (readonly number[])[], options: GenerateOptions, maxSeqLen: number): number {
  if (prompts.length === 0) return 0;
  if (prompts.some((p) => p.length === 0)) throw new InvalidArgumentError('every prompt needs at least one token');
  if ((options.stopStrings?.length ?? 0) > 0 && options.decode === undefined) {
    throw new InvalidArgumentError('stopStrings need a decode function to read the generated text');
  }
  const longest = Math.max(...prompts.map((p) => p.length));
  if (longest >= maxSeqLen)
    throw new InvalidArgumentError(
      `a prompt of ${longest} tokens leaves no room in the context window of ${maxSeqLen}`,
    );
  return longest;
}

export class SamplingGroups {
  /** Every batch row's result, in batch order. */
  readonly rows: GeneratedRow[];
  /** The group of each batch row (non-decreasing). */
  readonly groupOf: Int32Array;
  /** Per group: its first batch row, its new-token budget (its window's room), its sampler. */
  private readonly spans: { start: number; end: number; maxNew: number; sampler: RowSampler }[];
  /** The most new tokens any group samples. */
  readonly maxNew: number;

  constructor(
    private readonly groups: readonly SamplingGroup[],
    config: ModelConfig,
  ) {
    this.rows = groups.flatMap((group) =>
      group.prompts.map((): GeneratedRow => ({ tokens: [], logprobs: [], text: '', finishReason: 'length' })),
    );
    this.groupOf = new Int32Array(this.rows.length);
    let start = 0;
    this.spans = groups.map((group, g) => {
      const longest = checkPrompts(group.prompts, group.options, config.maxSeqLen);
      const end = start + group.prompts.length;
      this.groupOf.fill(g, start, end);
      const rows = this.rows.slice(start, end);
      const span = {
        start,
        end,
        maxNew: rows.length === 0 ? 0 : Math.max(0, Math.min(group.options.maxNewTokens, config.maxSeqLen - longest)),
        sampler: new RowSampler(rows, group.options, config.vocabSize),
      };
      start = end;
      return span;
    });
    this.maxNew = Math.max(0, ...this.spans.map((span) => span.maxNew));
  }

  /** The groups' count. */
  get count(): number {
    return this.groups.length;
  }

  /** Padded prompt tokens per prefill run: the smallest a group asked for, else `fallback`. */
  prefillTokenBudget(fallback: number): number {
    const asked = this.groups.flatMap((group) => group.options.prefillTokenBudget ?? []);
    return asked.length === 0 ? fallback : Math.min(...asked);
  }

  /**
   * The inverse temperatures of batch rows `batchRows` (each its group's): the engine's per-row
   * `inv_temperature` feed, so the probabilities it returns are the ones each row samples from.
   */
  inverseTemperatures(batchRows: readonly number[]): Float32Array {
    return Float32Array.from(batchRows, (b) => at(this.spans, at(this.groupOf, b)).sampler.inverseTemperature);
  }

  /**
   * Step `step`: every group with tokens left samples its unfinished rows from probabilities [B, V]
   * (at each row's inverse temperature) into `token` (0 elsewhere). Returns the rows that go on to
   * another step.
   */
  sample(step: number, probabilities: Float32Array, token: Int32Array, vocab: number): number {
    let continuing = 0;
    for (const span of this.spans) {
      if (step >= span.maxNew) {
        token.fill(0, span.start, span.end);
        continue;
      }
      const active = span.sampler.sample(
        probabilities.subarray(span.start * vocab, span.end * vocab),
        token.subarray(span.start, span.end),
      );
      if (step < span.maxNew - 1) continuing += active;
    }
    return continuing;
  }

  /** Whether batch row `b` takes part in the run after step `step` (not stopped, its group has tokens left). */
  running(b: number, step: number): boolean {
    return at(this.rows, b).finishReason !== 'stop' && step < at(this.spans, at(this.groupOf, b)).maxNew - 1;
  }

  /** Rows per group among `batchRows` (sorted by group), for a grouped run's `adapter_rows`. */
  counts(batchRows: Iterable<number>): number[] {
    const counts = new Array<number>(this.groups.length).fill(0);
    for (const b of batchRows) counts[at(this.groupOf, b)] = at(counts, at(this.groupOf, b)) + 1;
    return counts;
  }

  /** The results split by group; with `decoded`, texts from each group's decoder. */
  results(decoded = true): GeneratedRow[][] {
    return this.spans.map((span, g) => {
      const rows = this.rows.slice(span.start, span.end);
      const decode = at(this.groups, g).options.decode;
      if (decoded && decode) for (const row of rows) row.text = decode(row.tokens);
      return rows;
    });
  }
}
