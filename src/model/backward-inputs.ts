/**
 * What a backward pass takes from a loss's output (core/loss.ts): the heads it differentiates, and
 * per micro-batch the cotangents dLoss/d(head output) in the packed next-token layout.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { TokenLoss, TokenLossOutput } from '../core/loss.ts';
import { numpy as np } from './jax.ts';
import type { ModelConfig } from './config.ts';
import { toNextTokenLayout, type PackedBatch } from './batch.ts';
import type { Cotangents, HeadNeeds } from './layerwise-backward.ts';
import { TRAIN_HEAD_ELEMENT_BUDGET, microBatches } from './micro-batches.ts';

export interface PreparedMicroBatch {
  packed: PackedBatch;
  cotangents: Cotangents;
}

/** The heads the loss's gradient reads; a value loss on a model without a value head is refused. */
export function headNeeds(output: TokenLossOutput, loss: TokenLoss, config: ModelConfig): HeadNeeds {
  const needs: HeadNeeds = {
    entropy: output.gradEntropies !== undefined,
    value: output.gradValues !== undefined,
    detachValue: output.gradValues !== undefined && loss.detachValueHead === true,
  };
  if (needs.value && !config.valueHead) {
    throw new InvalidArgumentError(
      `loss "${loss.name}" trains a value head, but the model has none (set valueHead: true)`,
    );
  }
  return needs;
}

/** The training micro-batches of `sequences` with the loss's gradients as cotangents. */
export function cotangentBatches(
  sequences: readonly ArrayLike<number>[],
  output: TokenLossOutput,
  config: ModelConfig,
  tokenBudget: number,
): PreparedMicroBatch[] {
  const shape = {
    tokenBudget,
    headElements: TRAIN_HEAD_ELEMENT_BUDGET,
    vocabSize: config.vocabSize,
    maxSeqLen: config.maxSeqLen,
  };
  return microBatches(sequences, shape).map(({ indices, packed }) => {
    const layout = (gradients: Float32Array[]) =>
      np.array(
        toNextTokenLayout(
          packed,
          indices.map((i) => at(gradients, i, 'gradients')),
        ),
      );
    const cotangents: Cotangents = { logprobs: layout(output.gradLogprobs) };
    if (output.gradEntropies !== undefined) cotangents.entropies = layout(output.gradEntropies);
    if (output.gradValues !== undefined) cotangents.values = layout(output.gradValues);
    return { packed, cotangents };
  });
}

/** Tokens the loss trains: those with a non-zero log-prob gradient. */
export function trainedTokens(output: TokenLossOutput): number {
  let tokens = 0;
  for (const gradient of output.gradLogprobs) for (const g of gradient) if (g !== 0) tokens++;
  return tokens;
}
