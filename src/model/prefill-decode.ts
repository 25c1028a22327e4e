/**
 * The sampler's device side: the compiled prefill (the prompt through the decoder stack with full
 * attention, each block's keys and values kept as the main cache) and decode step (one token per
 * row through the same blocks with cached attention, kv-cache.ts), and their host drivers.
 */
import { at } from '../core/indexing.ts';
import { blockUntilReady, numpy as np, jit, tree, type JaxArray } from './jax.ts';
import { headDim, type ModelConfig } from './config.ts';
import {
  causalBias,
  decoderStack,
  fullAttention,
  lmLogits,
  param,
  rmsNorm,
  type Attention,
  type DeviceParams,
} from './transformer.ts';
import {
  CHUNK,
  cacheWrite,
  cachedAttention,
  chunkPlacement,
  concatenateRows,
  emptyChunk,
  mergeChunk,
  type CacheLayout,
  type Caches,
} from './kv-cache.ts';
import { ropeTables } from './rope.ts';
import type { TransformerModel } from './model.ts';

/** Compiled prefill and decode functions, one pair per model (jax-js caches per input shape). */
type Compiled = (...a: any[]) => any;
interface CompiledSampler {
  prefill: Compiled;
  decode: Compiled;
  merge: Compiled;
}
const compiledByModel = new WeakMap<TransformerModel, CompiledSampler>();

function compiledFor(model: TransformerModel): CompiledSampler {
  let fns = compiledByModel.get(model);
  if (fns === undefined) {
    const config = model.config;
    fns = {
      prefill: jit(((
        params: DeviceParams,
        tokens: JaxArray,
        promptMask: JaxArray,
        cos: JaxArray,
        sin: JaxArray,
        cacheSlots: JaxArray,
      ) => prefill(config, params, tokens, promptMask, cos, sin, cacheSlots)) as any) as Compiled,
      decode: jit(((
        params: DeviceParams,
        main: Caches,
        recent: Caches,
        token: JaxArray,
        mask: JaxArray,
        cos: JaxArray,
        sin: JaxArray,
        slot: JaxArray,
      ) => decodeStep(config, params, main, recent, token, mask, cos, sin, slot)) as any) as Compiled,
      merge: jit(((main: Caches, recent: Caches, place: JaxArray) =>
        mergeChunk(main, recent, place)) as any) as Compiled,
    };
    compiledByModel.set(model, fns);
  }
  return fns;
}

/**
 * Runs the prompt [B·P] through the network (promptMask [B, P]); returns last-position logits
 * [B, V] and the main caches, zero-padded to Tc = cacheSlots.shape[0] slots.
 */
function prefill(
  config: ModelConfig,
  params: DeviceParams,
  tokens: JaxArray,
  promptMask: JaxArray,
  cos: JaxArray,
  sin: JaxArray,
  cacheSlots: JaxArray,
) {
  const [B, P] = promptMask.shape as [number, number];
  const Tc = at(cacheSlots.shape, 0, 'cacheSlots.shape');
  cacheSlots.dispose();
  const bias = causalBias(promptMask, P); // [B, 1, P, P]
  const pad = (x: JaxArray): JaxArray =>
    Tc === P ? x : np.concatenate([x, np.zeros([B, config.numKvHeads, Tc - P, headDim(config)])], 2); // [B, KV, Tc, hd]
  const caches: Caches = { k: [], v: [] };
  // Full attention over the prompt, each block's keys and values kept as the main cache.
  const recording = (): Attention => {
    const attention = fullAttention(bias.ref, config, B, P);
    return (q, k, v) => {
      caches.k.push(pad(k.ref));
      caches.v.push(pad(v.ref));
      return attention(q, k, v);
    };
  };
  const x = np.take(param(params, 'embed').ref, tokens, 0); // [B·P, D]
  const out = decoderStack(params, config, x, { batch: B, queryLen: P, cos, sin }, recording);
  bias.dispose();
  disposeUnused(params, config);
  const last = out
    .reshape([B, P, config.hiddenSize])
    .slice([], P - 1)
    .reshape([B, config.hiddenSize]); // [B, D]
  const logits = lmLogits(params, config, rmsNorm(last, param(params, 'finalNorm'), config.rmsNormEps)); // [B, V]
  return { logits, caches };
}

/**
 * One token per row. main [B,KV,Tc,hd] (read-only), recent [B,KV,C,hd]; token [B];
 * mask [B, Tc + C] (1 = attendable: main slots, then recent slots); slot [C] one-hot (where in the
 * recent chunk this token goes). Returns logits [B, V] and the updated recent chunk.
 */
function decodeStep(
  config: ModelConfig,
  params: DeviceParams,
  main: Caches,
  recent: Caches,
  token: JaxArray,
  mask: JaxArray,
  cos: JaxArray,
  sin: JaxArray,
  slot: JaxArray,
) {
  const B = at(mask.shape, 0, 'mask.shape');
  const step = cacheWrite(mask, slot);
  const next: Caches = { k: [], v: [] };
  const x = np.take(param(params, 'embed').ref, token, 0); // [B, D]
  const out = decoderStack(params, config, x, { batch: B, queryLen: 1, cos, sin }, (layer) =>
    cachedAttention(config, main, recent, layer, step, next),
  );
  for (const a of [step.bias, step.write, step.keep]) a.dispose();
  disposeUnused(params, config);
  const logits = lmLogits(params, config, rmsNorm(out, param(params, 'finalNorm'), config.rmsNormEps)); // [B, V]
  return { logits, recent: next };
}

/** The sampler does not read the value head; release it so ownership balances. */
function disposeUnused(params: DeviceParams, config: ModelConfig): void {
  if (config.valueHead) {
    param(params, 'valueHead.w').dispose();
    param(params, 'valueHead.b').dispose();
  }
}

/** Host arrays of the left-padded prompts. */
export interface PromptArrays {
  /** Prompt ids [B·P] (0 on padding). */
  tokens: Int32Array;
  /** 1 on real prompt tokens, [B·P]. */
  prefillMask: Float32Array;
  /** RoPE position of each slot, counted from the row's first real token, [B·P]. */
  positions: Int32Array;
  /** Attendable slots for decoding [B, Tc + C], the prompts marked. */
  mask: Float32Array;
}

/** Left-padded prompt tokens [B·P], their mask [B·P] and RoPE positions; the decode mask [B, Tc + C] with the prompts marked. */
export function promptArrays(plan: CacheLayout & { prompts: readonly (readonly number[])[] }): PromptArrays {
  const { rows, promptLen: P, width } = plan;
  const tokens = new Int32Array(rows * P);
  const prefillMask = new Float32Array(rows * P);
  const positions = new Int32Array(rows * P);
  const mask = new Float32Array(rows * width);
  plan.prompts.forEach((prompt, b) => {
    const padLeft = at(plan.padLeft, b, 'padLeft');
    prompt.forEach((token, t) => {
      tokens[b * P + padLeft + t] = token;
      prefillMask[b * P + padLeft + t] = 1;
      mask[b * width + padLeft + t] = 1;
    });
    for (let t = 0; t < P; t++) positions[b * P + t] = Math.max(0, t - padLeft);
  });
  return { tokens, prefillMask, positions, mask };
}
/**
 * Prefill in row groups of `groupRows` rows; the groups' logits and caches joined. Each group is
 * finished before the next is dispatched: a compiled prefill holds every layer's intermediates
 * until it completes, so groups dispatched together keep theirs alive together and the group
 * size no longer bounds the heap (104 rows × 224 tokens needed 2 GB and crossed jax-js's 4 GiB
 * wasm heap in `agentrl dpo`'s held-out test).
 */
export async function prefillRows(
  model: TransformerModel,
  params: DeviceParams,
  plan: CacheLayout,
  host: PromptArrays,
  groupRows: number,
): Promise<{ logits: JaxArray; caches: Caches }> {
  const { rows: B, promptLen: P } = plan;
  const half = headDim(model.config) / 2;
  const rope = ropeTables(host.positions, 2 * half, model.config.ropeTheta);
  const parts: { logits: JaxArray; caches: Caches }[] = [];
  for (let start = 0; start < B; start += groupRows) {
    const rows = Math.min(groupRows, B - start);
    const part = compiledFor(model).prefill(
      tree.ref(params),
      np.array(host.tokens.slice(start * P, (start + rows) * P)),
      np.array(host.prefillMask.slice(start * P, (start + rows) * P)).reshape([rows, P]),
      np.array(rope.cos.slice(start * P * half, (start + rows) * P * half)).reshape([rows, 1, P, half]),
      np.array(rope.sin.slice(start * P * half, (start + rows) * P * half)).reshape([rows, 1, P, half]),
      np.zeros([plan.mainSlots]),
    ) as { logits: JaxArray; caches: Caches };
    if (start + rows < B) await blockUntilReady(part);
    parts.push(part);
  }
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only !== undefined) return only;
  return {
    logits: np.concatenate(
      parts.map((p) => p.logits),
      0,
    ),
    caches: concatenateRows(parts.map((p) => p.caches)),
  };
}
/**
 * The device side of decoding: the main cache and the recent chunk, and the host buffers that
 * describe the next step (attendable slots, per-row positions, the chunk slot), reused per token.
 */
export class CacheDecoder {
  private main: Caches;
  private recent: Caches;
  private readonly mask: Float32Array;
  private readonly positions: Int32Array;
  private readonly slot = new Float32Array(CHUNK);

  constructor(
    private readonly model: TransformerModel,
    private readonly params: DeviceParams,
    private readonly plan: CacheLayout,
    prompt: { caches: Caches; mask: Float32Array },
  ) {
    this.main = prompt.caches;
    this.recent = emptyChunk(model.config, plan.rows, CHUNK);
    this.mask = prompt.mask;
    this.positions = new Int32Array(plan.rows);
  }

  /** Runs `tokens` [B] (generated token number `step`, from 0) through the model; logits [B, V] for the next. */
  decode(tokens: Int32Array, step: number): JaxArray {
    const { rows: B, promptLen: P, mainSlots: Tc, width } = this.plan;
    const j = step % CHUNK; // where the sampled tokens go in the recent chunk
    if (j === 0 && step > 0) this.mergeRecent(P + step - CHUNK);
    for (let b = 0; b < B; b++) {
      this.mask[b * width + Tc + j] = 1;
      this.positions[b] = P + step - at(this.plan.padLeft, b, 'padLeft');
    }
    this.slot.fill(0);
    this.slot[j] = 1;
    const config = this.model.config;
    const half = headDim(config) / 2;
    const rope = ropeTables(this.positions, 2 * half, config.ropeTheta);
    const out = compiledFor(this.model).decode(
      tree.ref(this.params),
      tree.ref(this.main),
      this.recent,
      np.array(tokens),
      np.array(this.mask).reshape([B, width]),
      np.array(rope.cos).reshape([B, 1, 1, half]),
      np.array(rope.sin).reshape([B, 1, 1, half]),
      np.array(this.slot),
    ) as { logits: JaxArray; recent: Caches };
    this.recent = out.recent;
    return out.logits;
  }

  /** The chunk of slots [start, start + C) is full: merge it into the main cache and start an empty chunk. */
  private mergeRecent(start: number): void {
    const { rows: B, mainSlots: Tc, width } = this.plan;
    this.main = compiledFor(this.model).merge(this.main, this.recent, chunkPlacement(Tc, CHUNK, start)) as Caches;
    this.recent = emptyChunk(this.model.config, B, CHUNK);
    for (let b = 0; b < B; b++) {
      for (let c = 0; c < CHUNK; c++) {
        this.mask[b * width + start + c] = 1;
        this.mask[b * width + Tc + c] = 0;
      }
    }
  }

  dispose(): void {
    tree.dispose(this.main);
    tree.dispose(this.recent);
  }
}
