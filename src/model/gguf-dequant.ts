/**
 * GGML tensor types → float32, following ggml's reference dequantizers (ggml-quants.c,
 * `dequantize_row_*`) and computing every product in float32 in the same order as the `gguf`
 * Python package (gguf-py/gguf/quants.py), so the results are bit-identical to both.
 *
 *   F32, F16, BF16   plain little-endian floats
 *   Q8_0   32 values:  d f16, q int8[32]                        y = d·q
 *   Q4_0   32 values:  d f16, q uint8[16] (low nibbles first)   y = d·(q − 8)
 *   Q4_1   32 values:  d f16, m f16, q uint8[16]                y = d·q + m
 *   Q5_0   32 values:  d f16, qh uint32, q uint8[16]            y = d·((q | h<<4) − 16)
 *   Q5_1   32 values:  d f16, m f16, qh uint32, q uint8[16]     y = d·(q | h<<4) + m
 *   Q4_K  256 values:  d f16, dmin f16, scales[12] (8 × 6-bit scale + 6-bit min), q uint8[128]
 *                      y = (d·sc)·q − (dmin·m) per 32-value sub-block
 *   Q5_K  256 values:  as Q4_K plus qh[32] (the fifth bit)
 *   Q6_K  256 values:  ql[128] (low 4 bits), qh[64] (high 2 bits), scales int8[16], d f16
 *                      y = (d·sc)·(q − 32) per 16-value sub-block
 */
import { CheckpointError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { halfToFloat } from './safetensors.ts';

/** GGML type ids (ggml.h `enum ggml_type`) this reader dequantizes. */
export const ggmlTypes = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q4_1: 3,
  Q5_0: 6,
  Q5_1: 7,
  Q8_0: 8,
  Q4_K: 12,
  Q5_K: 13,
  Q6_K: 14,
  BF16: 30,
} as const;
export type GgmlTypeName = keyof typeof ggmlTypes;

/** Values per block and bytes per block of each type. */
export const ggmlBlockLayout: Record<GgmlTypeName, { values: number; bytes: number }> = {
  F32: { values: 1, bytes: 4 },
  F16: { values: 1, bytes: 2 },
  BF16: { values: 1, bytes: 2 },
  Q8_0: { values: 32, bytes: 34 },
  Q4_0: { values: 32, bytes: 18 },
  Q4_1: { values: 32, bytes: 20 },
  Q5_0: { values: 32, bytes: 22 },
  Q5_1: { values: 32, bytes: 24 },
  Q4_K: { values: 256, bytes: 144 },
  Q5_K: { values: 256, bytes: 176 },
  Q6_K: { values: 256, bytes: 210 },
};

const typeNameById = new Map<number, GgmlTypeName>(
  Object.entries(ggmlTypes).map(([name, id]) => [id, name as GgmlTypeName]),
);

/** The type name of a GGML type id; a CheckpointError listing the supported types otherwise. */
export function ggmlTypeName(
  id: number,
  { file = '<gguf>', tensor }: { file?: string; tensor?: string } = {},
): GgmlTypeName {
  const name = typeNameById.get(id);
  if (name === undefined) {
    throw new CheckpointError(
      `${file}: tensor "${tensor}": GGML type ${id} is not supported; supported: ${Object.keys(ggmlTypes).join(', ')}`,
      { file, tensor, type: id },
    );
  }
  return name;
}

/** Bytes that `count` values of a type occupy; `count` must be a whole number of blocks. */
export function ggmlByteSize(type: GgmlTypeName, count: number): number {
  const layout = ggmlBlockLayout[type];
  if (count % layout.values !== 0)
    throw new CheckpointError(`${count} values are not a whole number of ${type} blocks of ${layout.values}`, {
      type,
      count,
    });
  return (count / layout.values) * layout.bytes;
}

const f32 = Math.fround;

/** The blocks of one tensor: its bytes (checked reads), the output and the block count. */
interface Blocks {
  view: DataView;
  out: Float32Array;
  blocks: number;
}

/** An f16 at `offset`, widened. */
function half(view: DataView, offset: number): number {
  return halfToFloat(view.getUint16(offset, true));
}

/** One reader per type, each following its ggml `dequantize_row_*`. */
const dequantizers: Record<GgmlTypeName, (source: Blocks) => void> = {
  F32: ({ view, out }) => {
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
  },
  F16: ({ view, out }) => {
    for (let i = 0; i < out.length; i++) out[i] = half(view, 2 * i);
  },
  BF16: ({ view, out }) => {
    const bits = new Uint32Array(out.buffer);
    for (let i = 0; i < out.length; i++) bits[i] = view.getUint16(2 * i, true) << 16;
  },
  Q8_0: dequantizeQ8_0,
  Q4_0: dequantizeQ4_0,
  Q4_1: dequantizeQ4_1,
  Q5_0: (source) => dequantizeQ5(source, false),
  Q5_1: (source) => dequantizeQ5(source, true),
  Q4_K: (source) => dequantizeQ4KorQ5K(source, false),
  Q5_K: (source) => dequantizeQ4KorQ5K(source, true),
  Q6_K: dequantizeQ6_K,
};

/** Dequantizes `count` values of `type` from `bytes` (exactly `ggmlByteSize(type, count)` of them). */
export function dequantize(type: GgmlTypeName, bytes: Uint8Array, count: number): Float32Array {
  const needed = ggmlByteSize(type, count);
  if (bytes.length < needed)
    throw new CheckpointError(`${type}: ${count} values need ${needed} bytes, got ${bytes.length}`, { type, count });
  const view = new DataView(bytes.buffer, bytes.byteOffset, needed);
  const out = new Float32Array(count);
  dequantizers[type]({ view, out, blocks: count / ggmlBlockLayout[type].values });
  return out;
}

/** Q8_0: d f16, q int8[32]; y = d·q. */
function dequantizeQ8_0({ view, out, blocks }: Blocks): void {
  for (let b = 0; b < blocks; b++) {
    const base = b * 34;
    const d = half(view, base);
    for (let j = 0; j < 32; j++) out[b * 32 + j] = d * view.getInt8(base + 2 + j);
  }
}

/** Q4_0: d f16, q uint8[16] (low nibbles first); y = d·(q − 8). */
function dequantizeQ4_0({ view, out, blocks }: Blocks): void {
  for (let b = 0; b < blocks; b++) {
    const base = b * 18;
    const d = half(view, base);
    for (let j = 0; j < 16; j++) {
      const q = view.getUint8(base + 2 + j);
      out[b * 32 + j] = d * ((q & 0x0f) - 8);
      out[b * 32 + j + 16] = d * ((q >> 4) - 8);
    }
  }
}

/** Q4_1: d f16, m f16, q uint8[16]; y = d·q + m. */
function dequantizeQ4_1({ view, out, blocks }: Blocks): void {
  for (let b = 0; b < blocks; b++) {
    const base = b * 20;
    const d = half(view, base);
    const m = half(view, base + 2);
    for (let j = 0; j < 16; j++) {
      const q = view.getUint8(base + 4 + j);
      out[b * 32 + j] = f32(d * (q & 0x0f)) + m;
      out[b * 32 + j + 16] = f32(d * (q >> 4)) + m;
    }
  }
}

/** Q5_0: d f16, qh uint32, q uint8[16]; y = d·((q | h<<4) − 16).  Q5_1 (`withMin`): d, m, qh, q; y = d·(q | h<<4) + m. */
function dequantizeQ5({ view, out, blocks }: Blocks, withMin: boolean): void {
  const size = withMin ? 24 : 22;
  for (let b = 0; b < blocks; b++) {
    const base = b * size;
    const d = half(view, base);
    const m = withMin ? half(view, base + 2) : 0;
    const qhOffset = base + (withMin ? 4 : 2);
    const qh = view.getUint32(qhOffset, true);
    for (let j = 0; j < 16; j++) {
      const q = view.getUint8(qhOffset + 4 + j);
      const low = (q & 0x0f) | (((qh >>> j) & 1) << 4);
      const high = (q >> 4) | (((qh >>> (j + 16)) & 1) << 4);
      out[b * 32 + j] = withMin ? f32(d * low) + m : d * (low - 16);
      out[b * 32 + j + 16] = withMin ? f32(d * high) + m : d * (high - 16);
    }
  }
}

/**
 * Q4_K: d f16, dmin f16, scales[12] (8 × 6-bit scale + 6-bit min), q uint8[128];
 * y = (d·sc)·q − (dmin·m) per 32-value sub-block. Q5_K (`fiveBit`): qh[32] (the fifth bit) before q.
 */
function dequantizeQ4KorQ5K({ view, out, blocks }: Blocks, fiveBit: boolean): void {
  const size = fiveBit ? 176 : 144;
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  for (let b = 0; b < blocks; b++) {
    const base = b * size;
    const d = half(view, base);
    const dmin = half(view, base + 2);
    const scales = bytes.subarray(base + 4, base + 16);
    const qs = base + (fiveBit ? 48 : 16);
    // Four 64-value chunks; each is two 32-value sub-blocks (low nibbles, then high nibbles).
    for (let chunk = 0; chunk < 4; chunk++) {
      for (let sub = 0; sub < 2; sub++) {
        const [scale, min] = scaleMinK4(2 * chunk + sub, scales);
        const d1 = f32(d * scale);
        const m1 = f32(dmin * min);
        const highBit = 1 << (2 * chunk + sub);
        for (let l = 0; l < 32; l++) {
          const packed = view.getUint8(qs + 32 * chunk + l);
          let q = sub === 0 ? packed & 0x0f : packed >> 4;
          if (fiveBit && (view.getUint8(base + 16 + l) & highBit) !== 0) q += 16;
          out[b * 256 + 64 * chunk + 32 * sub + l] = f32(d1 * q) - m1;
        }
      }
    }
  }
}

/** Q6_K: ql[128] (low 4 bits), qh[64] (high 2 bits), scales int8[16], d f16; y = (d·sc)·(q − 32) per 16-value sub-block. */
function dequantizeQ6_K({ view, out, blocks }: Blocks): void {
  for (let b = 0; b < blocks; b++) {
    const base = b * 210;
    const d = half(view, base + 208);
    for (let n = 0; n < 2; n++) {
      for (let l = 0; l < 32; l++) {
        const low0 = view.getUint8(base + 64 * n + l);
        const low1 = view.getUint8(base + 64 * n + l + 32);
        const high = view.getUint8(base + 128 + 32 * n + l);
        const scales = base + 192 + 8 * n + Math.floor(l / 16); // int8 scales of the four values, 2 apart
        const first = b * 256 + 128 * n + l;
        out[first] = f32(d * view.getInt8(scales)) * (((low0 & 0x0f) | ((high & 3) << 4)) - 32);
        out[first + 32] = f32(d * view.getInt8(scales + 2)) * (((low1 & 0x0f) | (((high >> 2) & 3) << 4)) - 32);
        out[first + 64] = f32(d * view.getInt8(scales + 4)) * (((low0 >> 4) | (((high >> 4) & 3) << 4)) - 32);
        out[first + 96] = f32(d * view.getInt8(scales + 6)) * (((low1 >> 4) | (((high >> 6) & 3) << 4)) - 32);
      }
    }
  }
}

/** ggml's `get_scale_min_k4`: the 6-bit scale and min of sub-block `j` (0..7) from the 12 packed bytes. */
export function scaleMinK4(j: number, q: Uint8Array): [number, number] {
  const byte = (i: number) => at(q, i, 'scales');
  if (j < 4) return [byte(j) & 63, byte(j + 4) & 63];
  return [(byte(j + 4) & 0x0f) | ((byte(j - 4) >> 6) << 4), (byte(j + 4) >> 4) | ((byte(j) >> 6) << 4)];
}
