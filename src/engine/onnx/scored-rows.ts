/**
 * Per-sequence score arrays (TransformerModel.score's layout: index t holds log π(token t), index
 * 0 stays 0) filled run by run from the heads a forward run returns for its head rows.
 */
import { at, entry } from '../../core/indexing.ts';
import type { ScoreResult } from '../../model/model-options.ts';
import { trainGraphNames } from './train-graph.ts';
import type { RunRows } from './train-runs.ts';
import type { HostArray } from './session.ts';

export class ScoredRows {
  readonly result: ScoreResult;

  constructor(sequences: readonly ArrayLike<number>[], entropies: boolean, values: boolean) {
    const zeros = () => sequences.map((s) => new Float32Array(s.length));
    this.result = { logprobs: zeros() };
    if (entropies) this.result.entropies = zeros();
    if (values) this.result.values = zeros();
  }

  /** Writes one run's heads (target_logprobs, and entropies / values where this result keeps them). */
  add(run: RunRows, out: Record<string, { data: HostArray }>): void {
    const scatter = (into: Float32Array[] | undefined, name: string) => {
      if (into === undefined) return;
      const data = entry(out, name, 'run output').data as Float32Array;
      run.slots.forEach(([row, t], k) => {
        at(into, at(run.indices, row))[t] = at(data, k);
      });
    };
    scatter(this.result.logprobs, 'target_logprobs');
    scatter(this.result.entropies, trainGraphNames.entropies);
    scatter(this.result.values, 'values');
  }
}
