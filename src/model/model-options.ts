/** Options and reports of the engine's `TransformerModel` (src/engine/transformer-model.ts): creation, scoring, training. */
import type { TokenLossOutput } from '../core/loss.ts';
import type { LoraConfigInput } from './lora.ts';

/**
 * How the generation session holds the base's matmuls: 'float32' (default); 'int8' (every
 * projection and the head in 8-bit blocks) or 'int4' (projections in 4 bits, head in 8):
 * engine/onnx/matmul-nbits.ts. Scoring and training always read the float32 weights.
 */
export const baseQuantizations = ['float32', 'int8', 'int4'] as const;
export type BaseQuantization = (typeof baseQuantizations)[number];

export interface ModelOptions {
  seed?: number;
  /** Train low-rank adapters on frozen weights instead of the weights themselves (lora.ts). */
  lora?: LoraConfigInput;
  /**
   * The base's matmuls in generation (sampling): 'float32' (default), 'int8' or 'int4'. Scoring
   * (`score`, old/reference log-probs) and training stay on the float32 weights.
   */
  baseQuantization?: BaseQuantization;
}

export interface ScoreOptions {
  /** Logits are divided by this before the softmax (match the sampling temperature). */
  temperature?: number;
  entropies?: boolean;
  /** Per sequence, nonzero where the caller reads the result: scored there only (0 elsewhere). Absent: every position. */
  lossMask?: readonly ArrayLike<number>[];
}

export interface ScoreResult {
  /** Per sequence, aligned to tokens (index 0 is 0). */
  logprobs: Float32Array[];
  entropies?: Float32Array[];
  values?: Float32Array[];
}

export interface BackwardOptions {
  /**
   * The loss reads, and the backward pass differentiates, log_softmax(logits / temperature):
   * train at the temperature the batch was sampled at, so the importance ratio against the
   * sampler's log-probs is 1 before an update (verl and TRL do the same). Default 1.
   */
  temperature?: number;
}

export interface LossReport extends TokenLossOutput {
  tokens: number;
}

export interface StepReport extends LossReport {
  gradNorm: number;
  step: number;
}
