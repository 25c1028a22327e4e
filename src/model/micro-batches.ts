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
  return Math.max(64, Math.min(TRAIN_TOKEN_BUDGET, Math.floor(TRAIN_ACTIVATION_BUDGET / activationBytes(config, 1))));
}

/**
 * Most activation bytes a train step keeps from its forward runs (which score the batch for the
 * loss) until their backward runs; a batch past it keeps none and runs each forward again, in one
 * session with its backward (train-runs.ts `keepsActivations`). Two and a half runs' worth:
 * SmolLM2-135M's 4 × 256-token PPO step (4 runs, ~1.15 GB) runs each forward once (5.71 s a step
 * on 2 threads vs 6.71 s recomputing, 2026-12-05).
 */
export const TRAIN_KEPT_ACTIVATION_BUDGET = 2.5 * TRAIN_ACTIVATION_BUDGET;

/** The activation bytes a training run of `tokens` padded tokens keeps for its backward (an estimate: TRAIN_ACTIVATION_BYTES_PER_UNIT). */
export function activationBytes(config: Pick<ModelConfig, 'numLayers' | 'hiddenSize'>, tokens: number): number {
  return TRAIN_ACTIVATION_BYTES_PER_UNIT * config.numLayers * config.hiddenSize * tokens;
}
/** Most padded tokens per scoring run. */
export const SCORE_TOKEN_BUDGET = 4096;
/**
 * Bytes of one layer's largest intermediates per scoring token: the MLP's gate, up and product
 * [tokens, intermediate] and six [tokens, hidden] values, float32.
 */
function scoringLayerBytes(config: Pick<ModelConfig, 'hiddenSize' | 'intermediateSize'>): number {
  return 4 * (3 * config.intermediateSize + 6 * config.hiddenSize);
}
/**
 * Most per-layer intermediate bytes a scoring run allocates (scoringLayerBytes × tokens). Larger
 * runs cost memory and time: scoring bench:real's shape (32 × 300 tokens, SmolLM2-135M, 2 threads of an AMD EPYC,
 * 2026-12-06; peak RSS over the 1.07 GB before it, three runs each) at 4,096 tokens a run peaked
 * 1.34–4.03 GB in 16–22 s (glibc kept the freed [tokens, 1,536] buffers: RSS grew through the
 * layers), at 2,048 1.18–1.69 GB, at 1,024 1.07–1.14 GB in 15–16 s, at 512 (one row) in 16–22 s.
 */
export const SCORE_LAYER_BYTES_BUDGET = 32 * 2 ** 20;

/** Padded tokens per scoring run for `config`: SCORE_TOKEN_BUDGET, or fewer where one layer's intermediates would pass SCORE_LAYER_BYTES_BUDGET (SmolLM2-135M: 1,040). */
export function scoreTokenBudgetFor(config: Pick<ModelConfig, 'hiddenSize' | 'intermediateSize'>): number {
  return Math.max(64, Math.min(SCORE_TOKEN_BUDGET, Math.floor(SCORE_LAYER_BYTES_BUDGET / scoringLayerBytes(config))));
}
/**
 * Most logits ([tokens, V] elements) per scoring, training or generation run: 2^25 float32 = 128 MB
 * per [N, V] tensor (682 rows at SmolLM2's 49,152 ids). A run holds the logits and their log-softmax
 * (more with entropies). A probe of bench:real's shape (32 × 300 tokens generated, then scored; the
 * 2 threads of an AMD EPYC, 2026-12-05): at 2^26 logits the scoring peaked 0.97 GB above the
 * generation before it (3,321 MB RSS), at 2^25 0.42 GB (2,805 MB), in the same 19 s.
 */
export const HEAD_ELEMENT_BUDGET = 2 ** 25;
