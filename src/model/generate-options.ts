/**
 * What a generation takes and returns, for every sampler of the built-in model (engine-neutral:
 * the engine's `generate`, the policy server's batcher, the row sampler read these types).
 * Each sampled token's log-prob is taken under the temperature-scaled model distribution, which
 * `score(…, { temperature })` reproduces.
 */

export interface GenerateOptions {
  maxNewTokens: number;
  /** 0 = greedy. Default 1. */
  temperature?: number;
  /** Nucleus sampling mass; 1 = off. */
  topP?: number;
  /** Generation of a row ends after it emits one of these ids (the id is kept). */
  stopTokens?: readonly number[];
  /** Generation of a row ends once its text contains one of these (needs `decode`). */
  stopStrings?: readonly string[];
  /**
   * Only ids below this are sampled (a tokenizer smaller than the model's vocabulary). Log-probs
   * stay those of the full distribution, as `score()` computes them.
   */
  maxTokenId?: number;
  /** Decoder for stop strings and the returned text. */
  decode?: (tokens: readonly number[]) => string;
  seed?: number;
  /** Padded prompt tokens per prefill call (bounds memory); default micro-batches.ts `scoreTokenBudgetFor` (SmolLM2-135M: 1,040; small models 4,096). */
  prefillTokenBudget?: number;
  /** Called with each sampled id as it is sampled (streaming servers). */
  onToken?: (row: number, token: number, logprob: number) => void;
}

export interface GeneratedRow {
  /** Generated ids (the stop token included). */
  tokens: number[];
  /** log π(token) of each generated id. */
  logprobs: number[];
  text: string;
  finishReason: 'stop' | 'length';
}

/** Resolves after pending I/O has been handled (setImmediate runs after the poll phase): a sampler awaits it between tokens. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
