/**
 * The frozen base in 4 or 8 bits for inference: each projection x·W (W [K, N]) and the output head
 * become onnxruntime's `MatMulNBits` (com.microsoft contrib op; spec:
 * https://github.com/microsoft/onnxruntime/blob/main/docs/ContribOperators.md#com.microsoft.MatMulNBits).
 * Per output column n and block of 32 inputs along K, asymmetric b-bit codes with a zero point
 * (top = 2^b − 1):
 *
 *   lo = min(0, min_k w), hi = max(0, max_k w), scale = (hi − lo)/top, zp = round(−lo/scale)
 *   q = clamp(round(w/scale) + zp, 0, top),  w ≈ scale · (q − zp)
 *
 * (MLAS's own blockwise quantizer, MlasQuantizeBlockwise, uses the same grid.) accuracy_level 4
 * lets MLAS quantize the activations to int8 per block and run its int8 kernels (AVX2 here): the
 * weights stream at 1/8 (4 bits) or 1/4 (8 bits) of float32's bytes, which is what bounds decoding
 * at small batches (llama.cpp's Q4_1 GGUF is the same idea). Inference only: the trainers keep
 * float32 weights.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { parameterShapes, type HostParams, type ModelConfig } from '../../model/config.ts';
import { attr, type ValueId } from './graph.ts';
import type { GraphBuilder } from './ops.ts';

/*
 * How the base's matmuls run (model-options.ts `BaseQuantization`): 'float32' (the default);
 * 'int8': every projection and the head in 8-bit blocks; 'int4': the projections in 4-bit blocks,
 * the head in 8 (a GGUF's Q4 files keep the embedding at Q8_0 too). Activations go to int8 per
 * block (MatMulNBits accuracy_level 4: MLAS's int8 kernels; its float path for 8 bits has no fast
 * kernel on x86).
 */
export { baseQuantizations, type BaseQuantization } from '../../model/model-options.ts';

/** Inputs per quantization block (along K). */
export const NBITS_BLOCK = 32;

export interface NBitsWeight {
  K: number;
  N: number;
  bits: 4 | 8;
  /** [N, blocks, 32·bits/8]; 4 bits: two codes per byte, the even k in the low nibble. */
  packed: Uint8Array;
  /** [N · blocks] */
  scales: Float32Array;
  /** 8 bits: [N · blocks]; 4 bits: [N · ⌈blocks/2⌉], two per byte. */
  zeroPoints: Uint8Array;
}

/** Bytes of codes per block, zero-point bytes per column, codes per byte, the largest code. */
function layoutOf(bits: 4 | 8, blocks: number) {
  const perByte = 8 / bits;
  return { blockBytes: NBITS_BLOCK / perByte, zeroBytes: Math.ceil(blocks / perByte), perByte, top: 2 ** bits - 1 };
}

/** Codes of one block (with its zero point) written into `packed` from byte `base`; returns the scale. */
function quantizeBlock(block: Float32Array, bits: 4 | 8, packed: Uint8Array, base: number): [number, number] {
  const { perByte, top } = layoutOf(bits, 1);
  let lo = 0;
  let hi = 0;
  for (const w of block) {
    lo = Math.min(lo, w);
    hi = Math.max(hi, w);
  }
  const scale = hi > lo ? (hi - lo) / top : 1;
  const zero = Math.min(top, Math.max(0, Math.round(-lo / scale)));
  block.forEach((w, j) => {
    const q = Math.min(top, Math.max(0, Math.round(w / scale) + zero));
    const byte = base + Math.floor(j / perByte);
    packed[byte] = (packed[byte] ?? 0) | (q << ((j % perByte) * bits));
  });
  return [scale, zero];
}

/**
 * Quantizes W given as [K, N] (`layout: 'in-out'`, config.ts projections) or [N, K] (`'out-in'`,
 * the tied embedding read as the head). K need not be a multiple of the block (padded with zeros).
 */
export function quantizeNBits(
  data: Float32Array,
  K: number,
  N: number,
  layout: 'in-out' | 'out-in',
  bits: 4 | 8 = 4,
): NBitsWeight {
  if (data.length !== K * N) throw new InvalidArgumentError(`quantizeNBits: ${data.length} values for [${K}, ${N}]`);
  const blocks = Math.ceil(K / NBITS_BLOCK);
  const { blockBytes, zeroBytes, perByte } = layoutOf(bits, blocks);
  const packed = new Uint8Array(N * blocks * blockBytes);
  const scales = new Float32Array(N * blocks);
  const zeroPoints = new Uint8Array(N * zeroBytes);
  const block = new Float32Array(NBITS_BLOCK);
  for (let n = 0; n < N; n++) {
    for (let b = 0; b < blocks; b++) {
      for (let j = 0; j < NBITS_BLOCK; j++) {
        const k = b * NBITS_BLOCK + j;
        block[j] = k >= K ? 0 : (data[layout === 'in-out' ? k * N + n : n * K + k] ?? 0);
      }
      const [scale, zero] = quantizeBlock(block, bits, packed, (n * blocks + b) * blockBytes);
      scales[n * blocks + b] = scale;
      const zeroAt = n * zeroBytes + Math.floor(b / perByte);
      zeroPoints[zeroAt] = (zeroPoints[zeroAt] ?? 0) | (zero << ((b % perByte) * bits));
    }
  }
  return { K, N, bits, packed, scales, zeroPoints };
}

/** The float32 values a quantized weight stands for, as [K, N] (tests and error reports). */
export function dequantizeNBits({ K, N, bits, packed, scales, zeroPoints }: NBitsWeight): Float32Array {
  const blocks = Math.ceil(K / NBITS_BLOCK);
  const { blockBytes, zeroBytes, perByte, top } = layoutOf(bits, blocks);
  const out = new Float32Array(K * N);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const b = Math.floor(k / NBITS_BLOCK);
      const j = k % NBITS_BLOCK;
      const q = (at(packed, (n * blocks + b) * blockBytes + Math.floor(j / perByte)) >> ((j % perByte) * bits)) & top;
      const zero = (at(zeroPoints, n * zeroBytes + Math.floor(b / perByte)) >> ((b % perByte) * bits)) & top;
      out[k * N + n] = at(scales, n * blocks + b) * (q - zero);
    }
  }
  return out;
}

/** x [..., K] · W → [..., N] as one MatMulNBits node (accuracy_level 4: int8 activations per block). */
export function matMulNBits(g: GraphBuilder, x: ValueId, name: string, weight: NBitsWeight): ValueId {
  const { K, N, bits } = weight;
  const blocks = Math.ceil(K / NBITS_BLOCK);
  const packed = g.graph.initializer(`${name}.codes`, {
    dtype: 'uint8',
    shape: [N, blocks, layoutOf(bits, blocks).blockBytes],
    data: weight.packed,
  });
  const scales = g.graph.initializer(`${name}.scales`, { dtype: 'float32', shape: [N * blocks], data: weight.scales });
  const zeros = g.graph.initializer(`${name}.zeroPoints`, {
    dtype: 'uint8',
    shape: [weight.zeroPoints.length],
    data: weight.zeroPoints,
  });
  const shape = [...g.shape(x).slice(0, -1), N];
  const attributes = {
    K: attr.int(K),
    N: attr.int(N),
    bits: attr.int(bits),
    block_size: attr.int(NBITS_BLOCK),
    accuracy_level: attr.int(4),
  };
  return at(
    g.graph.node('MatMulNBits', [x, packed, scales, zeros], attributes, [{ dtype: 'float32', shape }], 'com.microsoft'),
    0,
  );
}

/** The projections `linear` reads (config.ts names) in `bits`, and the output head ('head') in 8 bits. */
export function quantizeBase(config: ModelConfig, params: HostParams, bits: 4 | 8): Map<string, NBitsWeight> {
  const quantized = new Map<string, NBitsWeight>();
  for (const [name, shape] of parameterShapes(config)) {
    const tensor = params.get(name);
    if (tensor === undefined) throw new InvalidArgumentError(`quantizeBase: no weight ${name} in params`, { name });
    const [rows, columns] = [at(shape, 0, 'shape'), shape[1] ?? 1];
    if (/^layers\.\d+\.w(q|k|v|o|Gate|Up|Down)$/.test(name))
      quantized.set(name, quantizeNBits(tensor.data, rows, columns, 'in-out', bits));
    else if (name === 'lmHead') quantized.set('head', quantizeNBits(tensor.data, rows, columns, 'in-out', 8));
    else if (name === 'embed' && config.tieWordEmbeddings)
      quantized.set('head', quantizeNBits(tensor.data, columns, rows, 'out-in', 8));
  }
  return quantized;
}
