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
import { bucketLength } from './batch.ts';
import { CHUNK, type CacheLayout } from './kv-cache.ts';
import { CacheDecoder, prefillRows, promptArrays } from './prefill-decode.ts';
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
  /** Padded prompt tokens per prefill call (bounds memory); default 4096. */
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

/** Padded prompt tokens (rows × P) per prefill call. */
const PREFILL_TOKEN_BUDGET = 4096;

/** Prompts are left-padded to a multiple of this (a multiple of CHUNK); few lengths, few shapes. */
const PROMPT_BUCKET = 32;

/** Generation batches are padded to a multiple of this many rows. */
const ROW_MULTIPLE = 8;
/** One generation: the cache layout (rows padded to a multiple of ROW_MULTIPLE), the prompts, the length. */
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
  // Rows are padded to a multiple of ROW_MULTIPLE with one-token filler prompts: fewer distinct
  // shapes to compile, and jax-js's allocator only reuses buffers of identical size classes.
  const rows = Math.ceil(realRows / ROW_MULTIPLE) * ROW_MULTIPLE;
  const prompts = [...asked, ...Array.from({ length: rows - realRows }, () => [0])];
  if (prompts.some((p) => p.length === 0)) throw new InvalidArgumentError('every prompt needs at least one token');
  if ((options.stopStrings?.length ?? 0) > 0 && options.decode === undefined) {
    throw new InvalidArgumentError('stopStrings need a decode function to read the generated text');
  }
  const longest = Math.max(...prompts.map((p) => p.length));
  const promptLen = bucketLength(longest, config.maxSeqLen, PROMPT_BUCKET);
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
  // [rows, H, P, P], so one call for a wide batch of long prompts would need gigabytes.
  const budget = options.prefillTokenBudget ?? PREFILL_TOKEN_BUDGET;
  const groupRows = Math.max(ROW_MULTIPLE, Math.floor(budget / plan.promptLen / ROW_MULTIPLE) * ROW_MULTIPLE);
  const first = prefillRows(model, params, plan, host, groupRows);
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
