/**
 * Token budgets of the engine's runs (src/engine): how many padded tokens one training or scoring
 * run holds (attention is [B, H, T, T]), and how many [tokens, V] logits (the head's tensor, the
 * largest at a real vocabulary: 682 rows at SmolLM2's 49,152 ids).
 */

import type { ModelConfig } from './config.ts';

/** Most padded tokens per training run (bounds memory: attention is [B, H, T, T]). */
export const TRAIN_TOKEN_BUDGET = 2048;
/**
 * Bytes a training run keeps between its forward and backward runs, per token, layer and hidden
 * unit: measured 1,153 MB for 4 × 256 tokens on SmolLM2-135M's 30 layers × 576 (docs/onnx-training.md,
 * "What a step holds"), about 16 float32 values.
 */
export const TRAIN_ACTIVATION_BYTES_PER_UNIT = 66;
/** Most activation bytes one training run keeps (its forward outputs exist twice for a moment as they cross). */
export const TRAIN_ACTIVATION_BUDGET = 512 * 2 ** 20;

/**
 * Padded tokens per training run for `config`: TRAIN_TOKEN_BUDGET, or fewer where a run's kept
 * activations would pass TRAIN_ACTIVATION_BUDGET (SmolLM2-135M: 470 tokens; the tiny models keep
 * 2048). The runs' gradients are summed, so the budget changes memory and speed, not the step.
 */
export function trainTokenBudgetFor(config: Pick<ModelConfig, 'numLayers' | 'hiddenSize'>): number {
  const bytesPerToken = TRAIN_ACTIVATION_BYTES_PER_UNIT * config.numLayers * config.hiddenSize;
  return Math.max(64, Math.min(TRAIN_TOKEN_BUDGET, Math.floor(TRAIN_ACTIVATION_BUDGET / bytesPerToken)));
}
/** Padded tokens per scoring run. */
export const SCORE_TOKEN_BUDGET = 4096;
/** Most logits ([tokens, V] elements) per run: 2^25 float32 = 128 MB per [N, V] tensor. */
export const HEAD_ELEMENT_BUDGET = 2 ** 25;
