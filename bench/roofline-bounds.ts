/**
 * Each bench:engine figure as a fraction of this machine's roofline (Williams, Waterman and
 * Patterson, CACM 2009): the least time a piece of work can take is max(FLOPs / peak FLOP/s,
 * bytes / bandwidth); the bound is whichever term is larger; the fraction is that time / the
 * measured time. Work is counted for a Llama-style decoder ("≈": elementwise ops, norms and the
 * softmax are left out; the counts follow Kaplan et al. 2020, "Scaling laws", §2.1: forward
 * ≈ 2 × matmul parameters + 2 × layers × context × d_model per token for the attention products):
 *   - forward FLOPs per token at context c: 2 × P_matmul + 4 × layers × d_model × c (QKᵀ and A·V);
 *   - decode at batch B: one step reads every weight once (P_matmul × bytes per weight, the head
 *     included: tied embeddings are read whole by the head) and each row's KV cache
 *     (c × layers × 2 × kv_dim × bytes per cached value), and does B tokens' forward FLOPs;
 *   - scoring: the forward FLOPs of every token at mean context length / 2 (FLOP-bound);
 *   - a LoRA step ≈ 2 × the forward (the base is frozen: its backward computes input gradients
 *     only); a full train step ≈ 3 × the forward (Kaplan et al.: backward = 2 × forward).
 */
export interface Roofline {
  /** Best measured float32 matmul rate, GFLOPS. */
  peakGflops: number;
  /** Best measured memory bandwidth, GB/s. */
  bandwidthGBps: number;
}

export interface DecoderShape {
  vocab: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  intermediate: number;
}

export interface Work {
  flops: number;
  bytes: number;
}

/** Weights every token's matmuls read: attention, MLP and the head. */
export function matmulParameters(shape: DecoderShape): number {
  const kvDim = (shape.hidden / shape.heads) * shape.kvHeads;
  const perLayer = 2 * shape.hidden * shape.hidden + 2 * shape.hidden * kvDim + 3 * shape.hidden * shape.intermediate;
  return shape.layers * perLayer + shape.vocab * shape.hidden;
}

/** Forward FLOPs of one token attending to `context` tokens. */
export function forwardFlops(shape: DecoderShape, context: number): number {
  return 2 * matmulParameters(shape) + 4 * shape.layers * shape.hidden * context;
}

/** One decode step of `batch` rows at mean context `context`; the work of `batch` tokens. */
export function decodeStepWork(
  shape: DecoderShape,
  {
    batch,
    context,
    bytesPerWeight,
    bytesPerCached,
  }: { batch: number; context: number; bytesPerWeight: number; bytesPerCached: number },
): Work {
  const kvDim = (shape.hidden / shape.heads) * shape.kvHeads;
  const cacheBytes = batch * context * shape.layers * 2 * kvDim * bytesPerCached;
  return { flops: batch * forwardFlops(shape, context), bytes: matmulParameters(shape) * bytesPerWeight + cacheBytes };
}

/** Scoring `rows` × `length` tokens (the weights read once). */
export function scoringWork(shape: DecoderShape, rows: number, length: number, bytesPerWeight = 4): Work {
  return { flops: rows * length * forwardFlops(shape, length / 2), bytes: matmulParameters(shape) * bytesPerWeight };
}

/** A train step over `rows` × `length` tokens: `passes` × the forward (2 for LoRA, 3 for full fine-tuning). */
export function trainStepWork(shape: DecoderShape, rows: number, length: number, passes: number): Work {
  const forward = scoringWork(shape, rows, length);
  return { flops: passes * forward.flops, bytes: passes * forward.bytes };
}

/** The least seconds `work` can take here, and what bounds it. */
export function boundOf(work: Work, roofline: Roofline): { seconds: number; bound: 'FLOP' | 'memory' } {
  const compute = work.flops / (roofline.peakGflops * 1e9);
  const memory = work.bytes / (roofline.bandwidthGBps * 1e9);
  return compute >= memory ? { seconds: compute, bound: 'FLOP' } : { seconds: memory, bound: 'memory' };
}

/** "31% of the FLOP bound": the measured seconds against the least possible. */
export function fractionText(work: Work, measuredSeconds: number, roofline: Roofline | null): string {
  if (roofline === null || !(measuredSeconds > 0)) return '—';
  const { seconds, bound } = boundOf(work, roofline);
  return `${((100 * seconds) / measuredSeconds).toFixed(0)}% (${bound})`;
}
