/**
 * The runs a training batch splits into — token-budget chunks of sequences, each split further by
 * head rows — and the graph inputs of one run (adapters, tokens, RoPE, bias; no cache).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { headDim, type HostParams, type ModelConfig } from '../../model/config.ts';
import type { LoraConfig } from '../../model/lora.ts';
import {
  activationBytes,
  HEAD_ELEMENT_BUDGET,
  TRAIN_KEPT_ACTIVATION_BUDGET,
  trainTokenBudgetFor,
} from '../../model/micro-batches.ts';
import { maskedHeadCount, packRows, promptBias, ropeFeeds, scoringChunks, scoringRows } from './feeds.ts';
import { modelGraphInputs } from './model-graph.ts';
import type { Feed } from './session.ts';

export interface OnnxTrainerOptions {
  /** ORT intra-op threads; default: ORT's choice (every core). */
  threads?: number;
  /** Padded tokens (rows × longest) per training run. */
  trainTokenBudget?: number;
  /** Padded tokens per scoring run (no activations kept, so larger); default micro-batches.ts's scoreTokenBudgetFor. */
  scoreTokenBudget?: number;
  /** Most [M, V] logits per run; default micro-batches.ts's HEAD_ELEMENT_BUDGET. */
  headElementBudget?: number;
  /** Most activation bytes a step keeps from its scoring forward runs; default micro-batches.ts's TRAIN_KEPT_ACTIVATION_BUDGET. */
  keptActivationBudget?: number;
}

/** One run's rows: the packed sequences and the head slice it reads. */
export interface RunRows {
  indices: readonly number[];
  packed: ReturnType<typeof packRows>;
  headRows: Int32Array;
  targets: Int32Array;
  slots: [number, number][];
}

/** Token ids must be integers in [0, vocabSize): the graph's Gather would wrap a negative id and truncate a fraction. */
function checkTokenIds(sequence: ArrayLike<number>, index: number, vocabSize: number): void {
  for (let t = 0; t < sequence.length; t++) {
    const id = sequence[t] as number;
    if (!(Number.isInteger(id) && id >= 0 && id < vocabSize))
      throw new InvalidArgumentError(
        `sequence ${index}, token ${t}: id ${id} is not a token id of this model (integers 0 … ${vocabSize - 1})`,
        { sequence: index, position: t, id },
      );
  }
}

/**
 * The rows of `lossMask` (one per sequence, its length) checked; each sequence's head count (its
 * nonzero positions after the first).
 */
function maskedHeads(sequences: readonly ArrayLike<number>[], lossMask: readonly ArrayLike<number>[]): number[] {
  if (lossMask.length !== sequences.length)
    throw new InvalidArgumentError(
      `lossMask has ${lossMask.length} rows for ${sequences.length} sequences (one per sequence)`,
      { rows: lossMask.length, sequences: sequences.length },
    );
  return sequences.map((sequence, index) => {
    const mask = at(lossMask, index);
    if (mask.length !== sequence.length)
      throw new InvalidArgumentError(
        `lossMask row ${index} has ${mask.length} positions for a sequence of ${sequence.length} tokens`,
        { sequence: index, positions: mask.length, tokens: sequence.length },
      );
    return maskedHeadCount(mask);
  });
}

/**
 * The runs a batch splits into: token-budget chunks, each split further by head rows. With
 * `lossMask` (nonzero where the caller reads a log-prob), the heads run at those positions only —
 * the others stay 0 in what the runs return — and a sequence without any is not run.
 */
export function* trainingRuns(
  sequences: readonly ArrayLike<number>[],
  config: ModelConfig,
  options: OnnxTrainerOptions,
  lossMask?: readonly ArrayLike<number>[],
): Generator<RunRows> {
  sequences.forEach((sequence, index) => {
    if (sequence.length > config.maxSeqLen) {
      throw new InvalidArgumentError(
        `a sequence of ${sequence.length} tokens exceeds the model's context window of ${config.maxSeqLen}`,
      );
    }
    checkTokenIds(sequence, index, config.vocabSize);
  });
  const heads = lossMask === undefined ? null : maskedHeads(sequences, lossMask);
  const scored = sequences.flatMap((_, index) => (heads === null || at(heads, index) > 0 ? [index] : []));
  const headRowsPerRun = Math.max(1, Math.floor((options.headElementBudget ?? HEAD_ELEMENT_BUDGET) / config.vocabSize));
  const tokenBudget = options.trainTokenBudget ?? trainTokenBudgetFor(config);
  const chunks = scoringChunks(
    scored.map((i) => at(sequences, i).length),
    { tokenBudget, headRowsPerRun },
    heads === null ? undefined : scored.map((i) => at(heads, i)),
  );
  for (const chunk of chunks) {
    const indices = chunk.map((k) => at(scored, k));
    const packed = packRows(
      indices.map((i) => at(sequences, i)),
      'right',
    );
    const masks = lossMask === undefined ? undefined : indices.map((i) => at(lossMask, i));
    const { headRows, targets, slots } = scoringRows(packed, masks);
    for (let start = 0; start < headRows.length; start += headRowsPerRun) {
      const end = Math.min(headRows.length, start + headRowsPerRun);
      yield {
        indices,
        packed,
        headRows: headRows.subarray(start, end),
        targets: targets.subarray(start, end),
        slots: slots.slice(start, end),
      };
    }
  }
}

/** The graph's inputs for one run (`arrays`: weights, adapters, masks; tokens, RoPE, bias): a cache-less graph. */
export function runFeeds(
  run: RunRows,
  temperature: number,
  config: ModelConfig,
  arrays: readonly HostParams[],
): Record<string, Feed> {
  const { packed } = run;
  const hd = headDim(config);
  const rope = ropeFeeds(packed.positions, packed.rows, packed.length, hd, config.ropeTheta);
  const M = run.headRows.length;
  const feeds: Record<string, Feed> = {
    [modelGraphInputs.tokens]: { dtype: 'int32', shape: [packed.rows, packed.length], data: packed.tokens },
    [modelGraphInputs.cos]: rope.cos,
    [modelGraphInputs.sin]: rope.sin,
    [modelGraphInputs.bias]: promptBias(packed, 0),
    [modelGraphInputs.headRows]: { dtype: 'int32', shape: [M], data: run.headRows },
    [modelGraphInputs.targets]: { dtype: 'int32', shape: [M], data: run.targets },
    [modelGraphInputs.invTemperature]: { dtype: 'float32', shape: [1], data: Float32Array.of(1 / temperature) },
  };
  for (const map of arrays)
    for (const [name, tensor] of map) feeds[name] = { dtype: 'float32', shape: tensor.shape, data: tensor.data };
  return feeds;
}

/**
 * Whether a step's scoring forward runs keep their activations for the backward: a one-run batch
 * always, a larger one when all its runs' estimated bytes fit the budget (default micro-batches.ts's
 * TRAIN_KEPT_ACTIVATION_BUDGET), so each forward runs once. A batch past it keeps none: each run is
 * one forward + backward session after the loss, holding one run's activations at a time (keeping
 * the first three runs of bench:real's 16-episode steps instead raised a two-iteration probe's peak
 * RSS from 3,717 to 3,863 MB and saved no time: 59 s and 40 s of training either way, 2026-12-05).
 * None under adapter dropout: the loss reads log-probs without masks, the backward's forward runs
 * with them.
 */
export function keepsActivations(
  runs: readonly RunRows[],
  config: ModelConfig,
  lora: LoraConfig | null,
  budget = TRAIN_KEPT_ACTIVATION_BUDGET,
): boolean {
  if ((lora !== null && lora.dropout > 0) || runs.length === 0) return false;
  if (runs.length === 1) return true;
  let bytes = 0;
  // Head-row runs of one packed batch each return the batch's activations.
  for (const run of runs) bytes += activationBytes(config, run.packed.rows * run.packed.length);
  return bytes <= budget;
}
