/**
 * Scoring on onnxruntime (onnx-inference.ts `score`): per-token log-probs (and values) of given
 * sequences, packed into runs of at most `tokenBudget` padded tokens; a run's head reads at most
 * `headElementBudget / V` rows, so a longer sequence runs the trunk again per slice of its head
 * rows. Index 0 of each row is 0 (nothing predicts the first token).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at, entry } from '../../core/indexing.ts';
import { headDim, type ModelConfig } from '../../model/config.ts';
import type { ScoreResult } from '../../model/model-options.ts';
import { packRows, promptBias, ropeFeeds, scoringChunks, scoringRows, type Padding } from './feeds.ts';
import type { InferenceRuns, OnnxScoreOptions } from './onnx-inference.ts';

/** Runs `call` on one session and set of adapters for the whole scoring call. */
type Pinned = <R>(call: (runs: InferenceRuns) => Promise<R>) => Promise<R>;

export async function scoreOnOnnx(
  pinned: Pinned,
  config: ModelConfig,
  sequences: readonly ArrayLike<number>[],
  { temperature = 1, padding = 'right' }: OnnxScoreOptions,
  { tokenBudget, headElementBudget }: { tokenBudget: number; headElementBudget: number },
): Promise<ScoreResult> {
  if (!(temperature > 0))
    throw new InvalidArgumentError(`temperature must be > 0, got ${temperature}`, { temperature });
  for (const sequence of sequences) {
    if (sequence.length > config.maxSeqLen) {
      throw new InvalidArgumentError(
        `a sequence of ${sequence.length} tokens exceeds the model's context window of ${config.maxSeqLen}`,
      );
    }
  }
  const result: ScoreResult = { logprobs: sequences.map((s) => new Float32Array(s.length)) };
  if (config.valueHead) result.values = sequences.map((s) => new Float32Array(s.length));
  const headRowsPerRun = Math.max(1, Math.floor(headElementBudget / config.vocabSize));
  await pinned(async (runs) => {
    for (const chunk of scoringChunks(
      sequences.map((s) => s.length),
      { tokenBudget, headRowsPerRun },
    )) {
      await scoreChunk(
        runs,
        chunk.map((i) => at(sequences, i)),
        chunk,
        result,
        { temperature, padding, headRowsPerRun },
      );
    }
  });
  return result;
}

async function scoreChunk(
  runs: InferenceRuns,
  sequences: readonly ArrayLike<number>[],
  indices: readonly number[],
  result: ScoreResult,
  { temperature, padding, headRowsPerRun }: { temperature: number; padding: Padding; headRowsPerRun: number },
): Promise<void> {
  const packed = packRows(sequences, padding);
  const { headRows, targets, slots } = scoringRows(packed);
  const rope = ropeFeeds(packed.positions, packed.rows, packed.length, headDim(runs.config), runs.config.ropeTheta);
  const bias = promptBias(packed, 1);
  const fetches = runs.config.valueHead ? ['target_logprobs', 'values'] : ['target_logprobs'];
  // A sequence longer than the head budget runs the trunk again per slice of its head rows.
  for (let start = 0; start < headRows.length; start += headRowsPerRun) {
    const end = Math.min(headRows.length, start + headRowsPerRun);
    const out = await runs.forward(
      {
        tokens: packed.tokens,
        rows: packed.rows,
        length: packed.length,
        ...rope,
        bias,
        headRows: headRows.subarray(start, end),
        targets: targets.subarray(start, end),
        invTemperature: 1 / temperature,
      },
      fetches,
    );
    const logprobs = entry(out, 'target_logprobs', 'run output').data as Float32Array;
    const values = out.values?.data as Float32Array | undefined;
    for (let k = start; k < end; k++) {
      const [row, t] = at(slots, k);
      const sequence = at(indices, row);
      at(result.logprobs, sequence)[t] = at(logprobs, k - start);
      if (values !== undefined && result.values !== undefined) at(result.values, sequence)[t] = at(values, k - start);
    }
  }
}
