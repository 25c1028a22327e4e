/** Options and reports of `TransformerModel` (model.ts): creation, scoring, training. */
import type { TokenLossOutput } from '../core/loss.ts';
import type { LoraConfigInput } from './lora.ts';

export interface ModelOptions {
  seed?: number;
  /** Train low-rank adapters on frozen weights instead of the weights themselves (lora.ts). */
  lora?: LoraConfigInput;
}

export interface ScoreOptions {
  /** Logits are divided by this before the softmax (match the sampling temperature). */
  temperature?: number;
  entropies?: boolean;
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
