/**
 * Batched sampling with a KV cache (kv-cache.ts).
 *
 * Prompts of different lengths are left-padded to a shared length P, so every row writes its next
 * key/value into the same cache slot; RoPE positions are per row (counted from the row's first real
 * token) and padding slots are masked out of attention. The prompt runs through the decoder stack
 * with full attention (recording each block's keys and values), then each token through the same
 * blocks with cached attention.
 *
 * Each sampled token's log-prob is taken under the temperature-scaled model distribution, which
 * `TransformerModel.score(…, { temperature })` reproduces.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { blockUntilReady, type JaxArray } from './jax.ts';
import type { ModelConfig } from './config.ts';
import { CHUNK, type CacheLayout } from './kv-cache.ts';
import { CacheDecoder, prefillRows, promptArrays } from './prefill-decode.ts';
import { powerOfTwoAtLeast, powerOfTwoAtMost } from './power-of-two.ts';
import { RowSampler } from './row-sampler.ts';
import type { TransformerModel } from './model.ts';

export { hitsStopString } from './row-sampler.ts';

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
  /** Padded prompt tokens per prefill call (bounds memory); default 2048. */
  prefillTokenBudget?: number;
  /** Run decode kernels on the worker pool; default: from 32 rows on. */
  decodeOnWorkers?: boolean;
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

/** Batches of at least this many rows decode on the worker pool (see generate()). */
const WORKER_ROWS = 32;

/**
 * Shapes and jax-js 0.1.25's wasm heap. Its allocator reuses a freed buffer only for a request of
 * the same size class and never returns memory, and a compiled call holds all its intermediates
 * until it completes; so the heap grows by one call's intermediates for every new shape and never
 * shrinks, up to the 4 GiB wasm32 limit. Generation therefore keeps to few shapes: rows and the
 * prompt length are powers of two (at least MIN_ROWS and MIN_PROMPT), and every prefill call of a
 * prompt length holds the same number of rows (PREFILL_TOKEN_BUDGET / P, or all of them) — a handful
 * of shapes however the batch sizes and prompt lengths of a run vary. Multiples of 8 rows and of 32
 * tokens gave a shape per turn of a long episode, and `agentrl dpo`'s default run (512-token window,
 * 100 held-out episodes) crossed the limit in its first held-out test.
 */
/** Padded prompt tokens (rows × P) per prefill call at most. */
const PREFILL_TOKEN_BUDGET = 2048;

/** Shortest padded prompt (a multiple of CHUNK). */
const MIN_PROMPT = 32;

/** Fewest rows of a generation batch (filler rows fill it). */
const MIN_ROWS = 8;

/** One generation: the cache layout (rows a power of two), the prompts, the length. */
interface GenerationPlan extends CacheLayout {
  /** The prompts, filler rows appended (one token each). */
  prompts: readonly (readonly number[])[];
  /** Rows asked for; rows from here on are filler. */
  realRows: number;
  /** Tokens generated at most per row. */
  maxNew: number;
}

function planGeneration(
  config: ModelConfig,
  asked: readonly (readonly number[])[],
  options: GenerateOptions,
): GenerationPlan {
  const realRows = asked.length;
  // Filler rows (one-token prompts, finished from the start) make the rows a power of two (see above).
  const rows = powerOfTwoAtLeast(realRows, MIN_ROWS);
  const prompts = [...asked, ...Array.from({ length: rows - realRows }, () => [0])];
  if (prompts.some((p) => p.length === 0)) throw new InvalidArgumentError('every prompt needs at least one token');
  if ((options.stopStrings?.length ?? 0) > 0 && options.decode === undefined) {
    throw new InvalidArgumentError('stopStrings need a decode function to read the generated text');
  }
  const longest = Math.max(...prompts.map((p) => p.length));
  const promptLen = Math.min(config.maxSeqLen, powerOfTwoAtLeast(longest, MIN_PROMPT));
  if (longest >= config.maxSeqLen) {
    throw new InvalidArgumentError(
      `a prompt of ${longest} tokens leaves no room in the context window of ${config.maxSeqLen}`,
    );
  }
  // Each row's positions count from its own first token, so a row may use the window up to
  // maxSeqLen − its own length; the shared cache may be longer than the window.
  const maxNew = Math.max(0, Math.min(options.maxNewTokens, config.maxSeqLen - longest));
  const chunks = Math.max(1, Math.ceil(maxNew / CHUNK));
  const mainSlots = promptLen + (chunks - 1) * CHUNK;
  const padLeft = prompts.map((p) => promptLen - p.length);
  return { prompts, realRows, rows, promptLen, maxNew, mainSlots, width: mainSlots + CHUNK, padLeft };
}

export async function generate(
  model: TransformerModel,
  prompts: readonly (readonly number[])[],
  options: GenerateOptions,
): Promise<GeneratedRow[]> {
  if (prompts.length === 0) return [];
  const plan = planGeneration(model.config, prompts, options);
  const host = promptArrays(plan);
  const params = model.deviceParams();
  // Narrow batches read logits with dataSync(): jax-js then runs those kernels synchronously on
  // this thread instead of posting each one to the worker pool, which for small per-token kernels
  // costs more than it saves (bench/engine.ts: 16 rows). From WORKER_ROWS rows on, the kernels are
  // big enough for the workers to pay (64 rows × 40-token prompts: 1,686 vs 1,400 tok/s).
  // Sync dispatch needs its inputs settled.
  const workerReads = options.decodeOnWorkers ?? plan.rows >= WORKER_ROWS;
  await blockUntilReady(params);
  // Prefill in row groups of at most this many padded tokens: attention over the prompt is
  // [rows, H, P, P], so one call for a wide batch of long prompts would need gigabytes. A power of
  // two, so the groups divide the rows and all have one shape.
  const budget = options.prefillTokenBudget ?? PREFILL_TOKEN_BUDGET;
  const groupRows = Math.min(plan.rows, powerOfTwoAtMost(Math.max(1, Math.floor(budget / plan.promptLen))));
  const first = await prefillRows(model, params, plan, host, groupRows);
  const decoder = new CacheDecoder(model, params, plan, { caches: first.caches, mask: host.mask });
  const rows: GeneratedRow[] = plan.prompts.map(() => ({ tokens: [], logprobs: [], text: '', finishReason: 'length' }));
  const sampler = new RowSampler(rows, options, model.config.vocabSize, plan.realRows);
  const token = new Int32Array(plan.rows);
  let logits: JaxArray | null = first.logits;
  try {
    for (let step = 0; logits !== null && step < plan.maxNew; step++) {
      const hostLogits = (workerReads ? await logits.data() : logits.dataSync()) as Float32Array; // [B, V] (consumes the array)
      logits = null;
      const active = sampler.sample(hostLogits, token);
      if (active === 0 || step === plan.maxNew - 1) break;
      // Between tokens the event loop runs (a server writes the streamed ids and answers other
      // requests meanwhile); the worker path already yields while it awaits its read.
      if (!workerReads) await yieldToEventLoop();
      logits = decoder.decode(token, step);
    }
  } finally {
    decoder.dispose();
    logits?.dispose();
  }
  rows.length = plan.realRows;
  if (options.decode) for (const row of rows) row.text = options.decode(row.tokens);
  return rows;
}
/** Resolves after pending I/O has been handled (setImmediate runs after the poll phase). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
