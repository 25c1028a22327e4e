/**
 * The policy contract (DESIGN.md "Contracts"). A policy maps a token-id prompt to generated token
 * ids with their sampling log-probs; a trainable policy can also score sequences, accumulate a
 * loss gradient and take an optimizer step — the primitives a remote GPU trainer would offer.
 *
 * Token ids stay ids end to end: the prompt is ids (the rollout renders the chat template once and
 * appends), the generation is ids, and `text` is only a view of them for the environment.
 */
import type { ChatFormat } from '../chat/chat-format.ts';
import type { TokenLoss } from '../core/loss.ts';
import type { OptimOptions } from '../model/optim-options.ts';
import type { LossReport } from '../model/model-options.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';

// The contract's report and option types are defined in engine-neutral src/model files (the engine
// implements them and imports nothing from this layer); this file is their public face.
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
  /**
   * The model's own chat protocol (its Jinja template, stop tokens, tool-call format), when it has
   * one (src/chat). Absent: agentrl's byte template (model/chat-template.ts) over `tokenizer`.
   */
  readonly chatFormat?: ChatFormat;
  generate(request: GenerateRequest): Promise<Generation>;
  /**
   * Many requests at once, results in request order. Implementations run requests that share
   * their sampling options in one batched call (the rollout sends one such batch per turn).
   * `options.onToken` and `options.signal` are optional to honour (see `GenerateBatchOptions`).
   */
  generateBatch(requests: readonly GenerateRequest[], options?: GenerateBatchOptions): Promise<Generation[]>;
}

/** What a caller of `generateBatch` may ask beyond the requests. */
export interface GenerateBatchOptions {
  /**
   * Called with each sampled id as it is sampled (`request` = its index in the batch), so a
   * server can stream the reply (the training gateway does). A policy that can (the built-in one)
   * calls it for every id of each returned `tokens`, in order, before `generateBatch` resolves;
   * one that cannot ignores it — callers then take the ids from the result.
   */
  onToken?: (request: number, token: number, logprob: number) => void;
  /**
   * Aborted when nobody wants the generations any more (a server's clients all left). A policy
   * stops as soon as it can — the built-in one at its next decode step, an `OpenAIPolicy` by
   * cancelling its in-flight requests — and rejects with `signal.reason`; one already aborted
   * rejects before any work. A policy that cannot stop early finishes and resolves as usual.
   */
  signal?: AbortSignal;
}

/** Sequences to score or train on, aligned as in core/loss.ts (index t = quantity for token t). */
export interface TokenBatch {
  sequences: readonly (readonly number[])[];
  /**
   * Log-probs are those of log_softmax(logits / temperature): pass the sampling temperature so
   * `logprobs` reproduces the sampling log-probs and `forwardBackward` trains that distribution.
   * Default 1. A backend that scores at temperature 1 only rejects any other value.
   */
  temperature?: number;
  /**
   * Per sequence (its length), nonzero at the positions whose log-probs the caller reads (an
   * episode's policy tokens): a backend may score those alone and return 0 elsewhere. Absent:
   * every position.
   */
  lossMask?: readonly ArrayLike<number>[];
}

export interface OptimReport {
  /** Global gradient norm before clipping (NaN when the backend does not report it). */
  gradNorm: number;
  /** Optimizer steps taken so far. */
  step: number;
}

/** One fused optimizer step: the loss report of `forwardBackward` plus `optimStep`'s. */
export interface StepReport extends LossReport, OptimReport {}

/** What a backend can train beyond per-token log-probs; a trainer refuses an algorithm needing a missing one. */
export interface PolicyCapabilities {
  /** A value head (`values`, and losses with a value term): PPO's critic. */
  valueHead: boolean;
  /** Losses with an entropy term (`entropyCoef` ≠ 0). */
  entropy: boolean;
  /** `optimStep({ maxGradNorm > 0 })` clips the global gradient norm. */
  gradientClipping: boolean;
}

export interface SaveOptions {
  /** Recorded with the weights (the built-in checkpoint's `agentrl.extra`): run, iteration, … */
  metadata?: Record<string, unknown>;
}

export interface TrainablePolicy extends Policy {
  /** The backend's name, for messages ('builtin', 'tinker'). */
  readonly backend: string;
  readonly capabilities: PolicyCapabilities;
  /**
   * Whether `generate`'s log-probs come from the engine `logprobs` and the update use, at the same
   * weights (absent = true). False (Tinker's sampling client vs its trainer) turns the off-policy
   * correction on under `offPolicyCorrection.mode: 'auto'` (src/algorithms/off-policy-correction.ts).
   */
  readonly samplerMatchesTrainer?: boolean;
  /** Per-token log-probs of each sequence at `batch.temperature` (index 0 is 0); for old / reference log-probs. */
  logprobs(batch: TokenBatch): Promise<Float32Array[]>;
  /** Forward, loss (of the log-probs at `batch.temperature`), backward; the gradient accumulates until `optimStep`. */
  forwardBackward(batch: TokenBatch, loss: TokenLoss): Promise<LossReport>;
  /** Applies the accumulated gradient (clip + AdamW) and clears it. */
  optimStep(options: OptimOptions): Promise<OptimReport>;
  /** Writes the weights for export (the built-in model: a Hugging Face folder, see model/checkpoint.ts). */
  save(path: string, options?: SaveOptions): Promise<void>;
  /**
   * Everything resuming training needs — weights, optimizer moments, step counter — as bytes
   * (kept in the run store's checkpoint rows). `loadState` of them gives a policy whose
   * log-probs and next update equal this one's.
   */
  saveState(): Promise<Uint8Array>;
  loadState(state: Uint8Array): Promise<void>;
  /** Optional (capabilities.valueHead): the value head's per-token values of each sequence. */
  values?(batch: TokenBatch): Promise<Float32Array[]>;
  /**
   * Optional: `forwardBackward` + `optimStep` on one batch as one call (the built-in engine fuses
   * them into one compiled step). Trainers use it when present; it gives the same update.
   */
  trainStep?(batch: TokenBatch, loss: TokenLoss, options: OptimOptions): Promise<StepReport>;
}

/** What a reference policy (KL, DPO) must do: score sequences. A frozen `BuiltinPolicy`, or a remote scorer. */
export type ReferencePolicy = Pick<TrainablePolicy, 'logprobs'>;

export function isTrainablePolicy(policy: Policy): policy is TrainablePolicy {
  const candidate = policy as Partial<TrainablePolicy>;
  return (
    typeof candidate.logprobs === 'function' &&
    typeof candidate.forwardBackward === 'function' &&
    typeof candidate.optimStep === 'function' &&
    typeof candidate.save === 'function' &&
    typeof candidate.saveState === 'function' &&
    typeof candidate.loadState === 'function'
  );
}
