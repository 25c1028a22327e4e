/**
 * The built-in decoder-only transformer (Llama / Qwen2 family), written on jax-js arrays.
 *
 *   x = embed[tokens]
 *   for each block:  x = x + Attn(RMSNorm(x));  x = x + SwiGLU(RMSNorm(x))
 *   logits = RMSNorm(x) @ embedᵀ  (tied)  or  @ lmHead
 *
 * RMSNorm (Zhang & Sennrich 2019): x / sqrt(mean(x²) + ε) · w
 * RoPE (Su et al. 2021, "RoFormer"), half-split rotation as in Hugging Face `rotate_half`:
 *   rope(x) = [x₁·cos − x₂·sin, x₂·cos + x₁·sin]
 * Grouped-query attention (Ainslie et al. 2023): KV heads repeated in HF `repeat_kv` order.
 * SwiGLU (Shazeer 2020): (silu(x Wg) ⊙ x Wu) Wd
 *
 * Ownership: every jax-js array is consumed by the op it is passed to; `.ref` keeps it alive.
 * Hidden states are kept as [N = B·T, D] so the embedding gather feeds straight into a
 * computation (a view op between a gather and its use breaks the backward pass under jit).
 */
import { at, entry } from '../core/indexing.ts';
import { numpy as np, nn, lax, type JaxArray } from './jax.ts';
import { headDim, type ModelConfig } from './config.ts';
import { linear } from './lora.ts';

/** Device parameters: host names (see config.ts) → arrays. */
export type DeviceParams = Record<string, JaxArray>;

/** Large finite negative fill for masked attention logits (−∞ would give NaN on empty rows). */
const MASKED = -1e9;

/** `params[name]`, checked (`entry`): read while a function is traced, not per token. */
export function param(params: DeviceParams, name: string): JaxArray {
  return entry(params, name, 'model parameter');
}

export function rmsNorm(x: JaxArray, weight: JaxArray, eps: number): JaxArray {
  const meanSquare = np.mean(np.square(x.ref), -1, { keepdims: true }); // [N, 1]
  return x.mul(np.reciprocal(np.sqrt(meanSquare.add(eps)))).mul(weight); // [N, D]
}

/** Rotates [B, H, T, hd] by per-row cos/sin tables [B, 1, T, hd/2]. */
export function applyRope(x: JaxArray, cos: JaxArray, sin: JaxArray, half: number): JaxArray {
  const x1 = x.ref.slice([], [], [], [0, half]); // [B, H, T, hd/2]
  const x2 = x.slice([], [], [], [half, 2 * half]); // [B, H, T, hd/2]
  const first = x1.ref.mul(cos.ref).sub(x2.ref.mul(sin.ref));
  const second = x2.mul(cos).add(x1.mul(sin));
  return np.concatenate([first, second], -1); // [B, H, T, hd]
}

/** [B, KV, T, hd] → [B, H, T, hd], each KV head repeated H/KV times (HF repeat_kv order). */
function repeatKv(x: JaxArray, groups: number): JaxArray {
  return groups === 1 ? x : np.repeat(x, groups, 1);
}

/**
 * How one block's queries read keys and values: full attention over the block's own keys
 * (`fullAttention`: training, scoring, prefill) or over a KV cache (kv-cache.ts: one decode step).
 * q [B, H, Tq, hd]; k, v [B, KV, Tq, hd] are the block's keys and values at the query positions.
 * Returns the attention context [N = B·Tq, H·hd], before the output projection. Consumes q, k, v.
 */
export type Attention = (q: JaxArray, k: JaxArray, v: JaxArray) => JaxArray;

export interface BlockInputs {
  batch: number;
  /** Query length. */
  queryLen: number;
  /** cos / sin tables for the query positions, [B, 1, Tq, hd/2]. */
  cos: JaxArray;
  sin: JaxArray;
  /** How the block attends (consumed: called once). */
  attention: Attention;
}

/** q/k/v projections with bias (Qwen2), per-head q/k RMSNorm (Qwen3) and rotary embedding. Returns q [B,H,T,hd], k/v [B,KV,T,hd]. */
export function projectQkv(
  params: DeviceParams,
  prefix: string,
  h: JaxArray,
  config: ModelConfig,
  inputs: { batch: number; queryLen: number; cos: JaxArray; sin: JaxArray },
): { q: JaxArray; k: JaxArray; v: JaxArray } {
  const hd = headDim(config);
  const { batch: B, queryLen: T } = inputs;
  let q = linear(params, prefix + 'wq', h.ref); // [N, H·hd]
  let k = linear(params, prefix + 'wk', h.ref); // [N, KV·hd]
  let v = linear(params, prefix + 'wv', h); // [N, KV·hd]
  if (config.attentionBias) {
    q = q.add(param(params, prefix + 'bq'));
    k = k.add(param(params, prefix + 'bk'));
    v = v.add(param(params, prefix + 'bv'));
  }
  let qh = q.reshape([B, T, config.numHeads, hd]).transpose([0, 2, 1, 3]); // [B, H, T, hd]
  let kh = k.reshape([B, T, config.numKvHeads, hd]).transpose([0, 2, 1, 3]); // [B, KV, T, hd]
  if (config.qkNorm) {
    // Qwen3: RMSNorm over each head's hd values, before the rotary embedding.
    qh = rmsNorm(qh, param(params, prefix + 'qNorm'), config.rmsNormEps); // [B, H, T, hd]
    kh = rmsNorm(kh, param(params, prefix + 'kNorm'), config.rmsNormEps); // [B, KV, T, hd]
  }
  const vh = v.reshape([B, T, config.numKvHeads, hd]).transpose([0, 2, 1, 3]); // [B, KV, T, hd]
  return {
    q: applyRope(qh, inputs.cos.ref, inputs.sin.ref, hd / 2),
    k: applyRope(kh, inputs.cos, inputs.sin, hd / 2),
    v: vh,
  };
}

/**
 * softmax(q kᵀ/√hd + bias) v over the block's own keys, bias broadcastable to [B, H, Tq, Tk]
 * (0 allowed, MASKED not). Consumes `bias` when called.
 */
export function fullAttention(bias: JaxArray, config: ModelConfig, batch: number, queryLen: number): Attention {
  return (q, k, v) => {
    const hd = headDim(config);
    const groups = config.numHeads / config.numKvHeads;
    const keys = repeatKv(k, groups); // [B, H, Tk, hd]
    const values = repeatKv(v, groups); // [B, H, Tk, hd]
    const scores = np
      .matmul(q, keys.transpose([0, 1, 3, 2]))
      .mul(1 / Math.sqrt(hd))
      .add(bias); // [B, H, Tq, Tk]
    const weights = nn.softmax(scores, -1); // [B, H, Tq, Tk]
    return np
      .matmul(weights, values) // [B, H, Tq, hd]
      .transpose([0, 2, 1, 3]) // [B, Tq, H, hd]
      .reshape([batch * queryLen, config.numHeads * hd]); // [N, H·hd]
  };
}

export function mlp(params: DeviceParams, prefix: string, h: JaxArray): JaxArray {
  const gate = nn.silu(linear(params, prefix + 'wGate', h.ref)); // [N, F]
  const up = linear(params, prefix + 'wUp', h); // [N, F]
  return linear(params, prefix + 'wDown', gate.mul(up)); // [N, D]
}

/**
 * Full-sequence forward pass to the final hidden states.
 * tokens [N = B·T] int32; keyMask [B, T] (1 = real token); cos/sin [B, 1, T, hd/2].
 * Consumes `params` entries it uses except the embedding and heads (read by `outputHeads`).
 */
export function hiddenStates(
  params: DeviceParams,
  config: ModelConfig,
  tokens: JaxArray,
  keyMask: JaxArray,
  cos: JaxArray,
  sin: JaxArray,
  batch: number,
  seqLen: number,
): JaxArray {
  const bias = causalBias(keyMask, seqLen); // [B, 1, T, T]
  const x = np.take(param(params, 'embed').ref, tokens, 0); // [N, D]
  const out = decoderStack(params, config, x, { batch, queryLen: seqLen, cos, sin }, () =>
    fullAttention(bias.ref, config, batch, seqLen),
  );
  bias.dispose();
  return rmsNorm(out, param(params, 'finalNorm'), config.rmsNormEps); // [N, D]
}

/**
 * Every block in turn, block i attending by `attentionFor(i)`. x [N, D] → [N, D] before the final
 * norm. Consumes `x`, cos / sin and the layers' entries.
 */
export function decoderStack(
  params: DeviceParams,
  config: ModelConfig,
  x: JaxArray,
  inputs: { batch: number; queryLen: number; cos: JaxArray; sin: JaxArray },
  attentionFor: (layer: number) => Attention,
): JaxArray {
  const { batch, queryLen, cos, sin } = inputs;
  for (let i = 0; i < config.numLayers; i++) {
    x = decoderLayer(
      params,
      `layers.${i}.`,
      x,
      { batch, queryLen, cos: cos.ref, sin: sin.ref, attention: attentionFor(i) },
      config,
    );
  }
  cos.dispose();
  sin.dispose();
  return x;
}

/**
 * One block: x + Attn(RMSNorm(x)), then + SwiGLU(RMSNorm(·)). x [N, D] → [N, D]. Reads the
 * parameters named `{prefix}…`; consumes `x`, the inputs' arrays and the entries it uses.
 */
export function decoderLayer(
  params: DeviceParams,
  prefix: string,
  x: JaxArray,
  inputs: BlockInputs,
  config: ModelConfig,
): JaxArray {
  const h = rmsNorm(x.ref, param(params, prefix + 'attnNorm'), config.rmsNormEps);
  const { q, k, v } = projectQkv(params, prefix, h, config, inputs);
  x = x.add(linear(params, prefix + 'wo', inputs.attention(q, k, v))); // [N, D]
  return x.add(mlp(params, prefix, rmsNorm(x.ref, param(params, prefix + 'mlpNorm'), config.rmsNormEps))); // [N, D]
}

/** Additive causal + key-padding bias [B, 1, T, T] from keyMask [B, T]. */
export function causalBias(keyMask: JaxArray, seqLen: number): JaxArray {
  const causal = np.tril(np.ones([seqLen, seqLen])); // [T, T]
  const allowed = causal.reshape([1, 1, seqLen, seqLen]).mul(keyMask.reshape([-1, 1, 1, seqLen])); // [B, 1, T, T]
  return allowed.sub(1).mul(-MASKED); // 0 where allowed, MASKED elsewhere
}

/** logits [N, V] from final hidden states [N, D]. Consumes `h` and the head parameter. */
export function lmLogits(params: DeviceParams, config: ModelConfig, h: JaxArray): JaxArray {
  if (config.tieWordEmbeddings) return np.matmul(h, param(params, 'embed').transpose()); // [N, V]
  param(params, 'embed').dispose();
  return np.matmul(h, param(params, 'lmHead')); // [N, V]
}

/**
 * One-hot rows [N, V] of targets [N], built by comparing against 0..V−1. Not `nn.oneHot`: in
 * jax-js 0.1.25 it slices rows of `eye(V)`, a [V, V] table (9.7 GB at a 49,152-token vocabulary,
 * past the 4 GiB wasm32 heap). The same 0/1 values, so the same sums.
 */
export function oneHotRows(targets: JaxArray, vocabSize: number): JaxArray {
  const ids = np.arange(vocabSize, undefined, 1, { dtype: np.int32 }).reshape([1, vocabSize]); // [1, V]
  return np.equal(targets.reshape([-1, 1]), ids).astype(np.float32); // [N, V]
}

export interface HeadOutputs {
  /** log π(target | prefix) at each position, [N]. */
  logprobs: JaxArray;
  /** Entropy of π(· | prefix), [N] (when asked). */
  entropies?: JaxArray;
  /** Value head output, [N] (when the model has one). */
  values?: JaxArray;
}

/**
 * Per-position outputs for given next-token targets. `invTemperature` scales the logits
 * (1 = the model's own distribution). With `detachValue` the value head reads the hidden states
 * through a stop-gradient: a value loss then trains the head alone, never the shared trunk.
 * Consumes all inputs.
 */
export function outputHeads(
  params: DeviceParams,
  config: ModelConfig,
  h: JaxArray,
  targets: JaxArray,
  invTemperature: JaxArray,
  withEntropy: boolean,
  detachValue = false,
): HeadOutputs {
  const values = config.valueHead ? valueHeadOutput(params, h.ref, detachValue) : undefined;
  return { ...policyHeads(lmLogits(params, config, h), targets, invTemperature, withEntropy), values };
}

/** The value head on hidden states [N, D] → [N] (through a stop-gradient with `detach`). Consumes `h` and the head. */
export function valueHeadOutput(params: DeviceParams, h: JaxArray, detach: boolean): JaxArray {
  const features = detach ? lax.stopGradient(h) : h;
  return np.matmul(features, param(params, 'valueHead.w')).reshape([-1]).add(param(params, 'valueHead.b')); // [N]
}

/** log π(target) (and entropies) from logits [N, V] at `invTemperature`. Consumes its inputs. */
export function policyHeads(
  logits: JaxArray,
  targets: JaxArray,
  invTemperature: JaxArray,
  withEntropy: boolean,
): { logprobs: JaxArray; entropies?: JaxArray } {
  const vocabSize = at(logits.shape, 1, 'logits.shape');
  const logp = nn.logSoftmax(logits.mul(invTemperature), -1); // [N, V]
  const logprobs = logp.ref.mul(oneHotRows(targets, vocabSize)).sum(-1); // [N]
  let entropies: JaxArray | undefined;
  if (withEntropy) entropies = np.exp(logp.ref).mul(logp.ref).sum(-1).neg(); // [N]
  logp.dispose();
  return { logprobs, entropies };
}
