/**
 * The policy contract (DESIGN.md "Contracts"). A policy maps a token-id prompt to generated token
 * ids with their sampling log-probs; a trainable policy can also score sequences, accumulate a
 * loss gradient and take an optimizer step — the primitives a remote GPU trainer would offer.
 *
 * Token ids stay ids end to end: the prompt is ids (the rollout renders the chat template once and
 * appends), the generation is ids, and `text` is only a view of them for the environment.
 */
import type { TokenLoss } from '../core/loss.ts';
import type { OptimOptions } from '../model/adamw.ts';
import type { LossReport } from '../model/model.ts';
import type { Tokenizer } from '../model/tokenizer.ts';

export type { LossReport, OptimOptions };

/** Sampling options of one generation. */
export interface SamplingOptions {
  /** Most tokens to generate (the stop token included). */
  maxNewTokens: number;
  /** 0 = greedy. Default 1. */
  temperature?: number;
  /** Nucleus sampling mass; 1 = off (default). */
  topP?: number;
  /** Generation ends after one of these ids (kept in `tokens`). Default: the chat template's `<|end|>`. */
  stopTokens?: readonly number[];
  /** Generation ends once the generated text contains one of these. Default none. */
  stopStrings?: readonly string[];
  /** Seed of the sampler. Default 0. */
  seed?: number;
}

export interface GenerateRequest extends SamplingOptions {
  /** The context as token ids (e.g. `renderGenerationPrompt(messages).tokens`); at least one id. */
  prompt: readonly number[];
}

export interface Generation {
  /** Generated ids; when a stop token ended the generation it is the last id. */
  tokens: number[];
  /** Sampling log-prob of each generated id (temperature-scaled distribution), same length as `tokens`. */
  logprobs: number[];
  /** The generated text, without the stop token that ended it. */
  text: string;
  /** 'stop': a stop token or stop string ended it; 'length': `maxNewTokens` or the context window did. */
  finishReason: 'stop' | 'length';
}

export interface Policy {
  /** The tokenizer of the prompt and generated ids. */
  readonly tokenizer: Tokenizer;
  /** Longest prompt + generation the policy handles (the model's `maxSeqLen`; Infinity when unbounded). */
  readonly contextWindow: number;
  generate(request: GenerateRequest): Promise<Generation>;
  /**
   * Many requests at once, results in request order. Implementations run requests that share
   * their sampling options in one batched call (the rollout sends one such batch per turn).
   */
  generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]>;
}

/** Sequences to score or train on, aligned as in core/loss.ts (index t = quantity for token t). */
export interface TokenBatch {
  sequences: readonly (readonly number[])[];
  /**
   * `logprobs` divides the logits by this (match the sampling temperature); default 1.
   * `forwardBackward` trains at temperature 1 and rejects any other value.
   */
  temperature?: number;
}

export interface OptimReport {
  gradNorm: number;
  /** Optimizer steps taken so far. */
  step: number;
}

export interface TrainablePolicy extends Policy {
  /** Per-token log-probs of each sequence (index 0 is 0); for old / reference log-probs. */
  logprobs(batch: TokenBatch): Promise<Float32Array[]>;
  /** Forward, loss, backward; the gradient accumulates until `optimStep`. */
  forwardBackward(batch: TokenBatch, loss: TokenLoss): Promise<LossReport>;
  /** Applies the accumulated gradient (clip + AdamW) and clears it. */
  optimStep(options: OptimOptions): Promise<OptimReport>;
  /** Writes a checkpoint folder (Hugging Face layout, see model/checkpoint.ts). */
  save(path: string): Promise<void>;
}

export function isTrainablePolicy(policy: Policy): policy is TrainablePolicy {
  const candidate = policy as Partial<TrainablePolicy>;
  return (
    typeof candidate.logprobs === 'function' &&
    typeof candidate.forwardBackward === 'function' &&
    typeof candidate.optimStep === 'function' &&
    typeof candidate.save === 'function'
  );
}
