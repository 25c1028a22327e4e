/**
 * The deterministic weights of the PyTorch reference fixtures (src/engine/fixtures/), built bit for
 * bit as scripts/reference/engine/weights.py builds them, so no weights are checked in:
 *
 *   key   = fmix32((seed · 0x9E3779B1 + stream · 0x85EBCA77 + 0x27D4EB2F) mod 2³²)
 *   h     = fmix32((i · 0x9E3779B1 + key) mod 2³²)                  element i of the stream
 *   value = float32(offset + (2 · (h >>> 8) / 2²⁴ − 1) · scale)    float64 ops, one rounding
 *
 * fmix32 is MurmurHash3's finaliser (Appleby 2011). `Math.imul` and `>>> 0` are the integer
 * arithmetic mod 2³² numpy's uint32 does; the float64 steps run in the same order on both sides.
 */

/** MurmurHash3's 32-bit finaliser. */
export function fmix32(value: number): number {
  let h = value;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The key of one stream under a seed. */
function streamKey(seed: number, stream: number): number {
  return fmix32((Math.imul(seed, 0x9e3779b1) + Math.imul(stream, 0x85ebca77) + 0x27d4eb2f) >>> 0);
}

/** Elements 0..size−1 of a stream: float32 values in [offset − scale, offset + scale). */
export function uniformArray(
  seed: number,
  stream: number,
  size: number,
  { scale, offset }: { scale: number; offset: number },
): Float32Array {
  const key = streamKey(seed, stream);
  const out = new Float32Array(size);
  for (let i = 0; i < size; i++) {
    const h = fmix32((Math.imul(i, 0x9e3779b1) + key) >>> 0);
    out[i] = offset + (2 * ((h >>> 8) / 16777216) - 1) * scale;
  }
  return out;
}

/** Σᵢ bits(xᵢ) · (2i + 1) mod 2³² over the float32 bit patterns: equal only for bit-identical arrays. */
export function bitsChecksum(values: Float32Array): number {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  let sum = 0;
  for (let i = 0; i < bits.length; i++) sum = (sum + Math.imul(bits[i] as number, 2 * i + 1)) >>> 0;
  return sum;
}

/**
 * The elements of an array the fixtures keep: all of a small one (≤ 128), else the first 64 and 64
 * more at an even stride over the rest (weights.py's `sample_indices`).
 */
export function sampleIndices(size: number): number[] {
  if (size <= 128) return Array.from({ length: size }, (_, i) => i);
  const stride = Math.floor((size - 64) / 64);
  return [...Array.from({ length: 64 }, (_, i) => i), ...Array.from({ length: 64 }, (_, k) => 64 + stride * k)];
}
