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

const typeNameById = new Map<number, GgmlTypeName>(Object.entries(ggmlTypes).map(([name, id]) => [id, name as GgmlTypeName]));

/** The type name of a GGML type id; a CheckpointError listing the supported types otherwise. */
export function ggmlTypeName(id: number, { file = '<gguf>', tensor }: { file?: string; tensor?: string } = {}): GgmlTypeName {
  const name = typeNameById.get(id);
  if (name === undefined) {
    throw new CheckpointError(`${file}: tensor "${tensor}": GGML type ${id} is not supported; supported: ${Object.keys(ggmlTypes).join(', ')}`, { file, tensor, type: id });
  }
  return name;
}

/** Bytes that `count` values of a type occupy; `count` must be a whole number of blocks. */
export function ggmlByteSize(type: GgmlTypeName, count: number): number {
  const layout = ggmlBlockLayout[type];
  if (count % layout.values !== 0) throw new CheckpointError(`${count} values are not a whole number of ${type} blocks of ${layout.values}`, { type, count });
  return (count / layout.values) * layout.bytes;
}

const f32 = Math.fround;

/** Dequantizes `count` values of `type` from `bytes` (exactly `ggmlByteSize(type, count)` of them). */
export function dequantize(type: GgmlTypeName, bytes: Uint8Array, count: number): Float32Array {
  const needed = ggmlByteSize(type, count);
  if (bytes.length < needed) throw new CheckpointError(`${type}: ${count} values need ${needed} bytes, got ${bytes.length}`, { type, count });
  const view = new DataView(bytes.buffer, bytes.byteOffset, needed);
  const out = new Float32Array(count);
  const blocks = count / ggmlBlockLayout[type].values;
  const half = (offset: number): number => halfToFloat(view.getUint16(offset, true));
  switch (type) {
    case 'F32':
      for (let i = 0; i < count; i++) out[i] = view.getFloat32(4 * i, true);
      return out;
    case 'F16':
      for (let i = 0; i < count; i++) out[i] = half(2 * i);
      return out;
    case 'BF16': {
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < count; i++) bits[i] = view.getUint16(2 * i, true) << 16;
      return out;
    }
    case 'Q8_0':
      for (let b = 0; b < blocks; b++) {
        const base = b * 34;
        const d = half(base);
        for (let j = 0; j < 32; j++) out[b * 32 + j] = d * view.getInt8(base + 2 + j);
      }
      return out;
    case 'Q4_0':
      for (let b = 0; b < blocks; b++) {
        const base = b * 18;
        const d = half(base);
        for (let j = 0; j < 16; j++) {
          const q = bytes[base + 2 + j]!;
          out[b * 32 + j] = d * ((q & 0x0f) - 8);
          out[b * 32 + j + 16] = d * ((q >> 4) - 8);
        }
      }
      return out;
    case 'Q4_1':
      for (let b = 0; b < blocks; b++) {
        const base = b * 20;
        const d = half(base);
        const m = half(base + 2);
        for (let j = 0; j < 16; j++) {
          const q = bytes[base + 4 + j]!;
          out[b * 32 + j] = f32(d * (q & 0x0f)) + m;
          out[b * 32 + j + 16] = f32(d * (q >> 4)) + m;
        }
      }
      return out;
    case 'Q5_0':
    case 'Q5_1': {
      const withMin = type === 'Q5_1';
      const size = withMin ? 24 : 22;
      for (let b = 0; b < blocks; b++) {
        const base = b * size;
        const d = half(base);
        const m = withMin ? half(base + 2) : 0;
        const qhOffset = base + (withMin ? 4 : 2);
        const qh = view.getUint32(qhOffset, true);
        for (let j = 0; j < 16; j++) {
          const q = bytes[qhOffset + 4 + j]!;
          const low = (q & 0x0f) | (((qh >>> j) & 1) << 4);
          const high = (q >> 4) | (((qh >>> (j + 16)) & 1) << 4);
          out[b * 32 + j] = withMin ? f32(d * low) + m : d * (low - 16);
          out[b * 32 + j + 16] = withMin ? f32(d * high) + m : d * (high - 16);
        }
      }
      return out;
    }
    case 'Q4_K':
    case 'Q5_K': {
      const fiveBit = type === 'Q5_K';
      const size = fiveBit ? 176 : 144;
      for (let b = 0; b < blocks; b++) {
        const base = b * size;
        const d = half(base);
        const dmin = half(base + 2);
        const scales = bytes.subarray(base + 4, base + 16);
        const qh = fiveBit ? bytes.subarray(base + 16, base + 48) : undefined;
        const qs = bytes.subarray(base + (fiveBit ? 48 : 16), base + size);
        // Four 64-value chunks; each is two 32-value sub-blocks (low nibbles, then high nibbles).
        for (let chunk = 0; chunk < 4; chunk++) {
          for (let sub = 0; sub < 2; sub++) {
            const [scale, min] = scaleMinK4(2 * chunk + sub, scales);
            const d1 = f32(d * scale);
            const m1 = f32(dmin * min);
            const highBit = 1 << (2 * chunk + sub);
            for (let l = 0; l < 32; l++) {
              const packed = qs[32 * chunk + l]!;
              let q = sub === 0 ? packed & 0x0f : packed >> 4;
              if (qh !== undefined && (qh[l]! & highBit) !== 0) q += 16;
              out[b * 256 + 64 * chunk + 32 * sub + l] = f32(d1 * q) - m1;
            }
          }
        }
      }
      return out;
    }
    case 'Q6_K':
      for (let b = 0; b < blocks; b++) {
        const base = b * 210;
        const ql = bytes.subarray(base, base + 128);
        const qh = bytes.subarray(base + 128, base + 192);
        const d = half(base + 208);
        for (let n = 0; n < 2; n++) {
          for (let l = 0; l < 32; l++) {
            const low0 = ql[64 * n + l]!;
            const low1 = ql[64 * n + l + 32]!;
            const high = qh[32 * n + l]!;
            const quads = [
              ((low0 & 0x0f) | ((high & 3) << 4)) - 32,
              ((low1 & 0x0f) | (((high >> 2) & 3) << 4)) - 32,
              ((low0 >> 4) | (((high >> 4) & 3) << 4)) - 32,
              ((low1 >> 4) | (((high >> 6) & 3) << 4)) - 32,
            ];
            for (let k = 0; k < 4; k++) {
              const scale = view.getInt8(base + 192 + 8 * n + Math.floor(l / 16) + 2 * k);
              out[b * 256 + 128 * n + 32 * k + l] = f32(d * scale) * quads[k]!;
            }
          }
        }
      }
      return out;
  }
}

/** ggml's `get_scale_min_k4`: the 6-bit scale and min of sub-block `j` (0..7) from the 12 packed bytes. */
export function scaleMinK4(j: number, q: Uint8Array): [number, number] {
  if (j < 4) return [q[j]! & 63, q[j + 4]! & 63];
  return [(q[j + 4]! & 0x0f) | ((q[j - 4]! >> 6) << 4), (q[j + 4]! >> 4) | ((q[j]! >> 6) << 4)];
}
