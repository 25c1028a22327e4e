import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import { CheckpointError } from '../core/errors.ts';
import { dequantize, ggmlBlockLayout, ggmlTypeName, type GgmlTypeName } from './gguf-dequant.ts';
import { at } from '../core/indexing.ts';

// Exact float16 bit patterns of a few scales.
const half = { '0.5': 0x3800, '0.25': 0x3400, '2': 0x4000, '-0.125': 0xb000, '1.5': 0x3e00 } as const;

/** `blocks` blocks of seeded random bytes with the f16 fields at `halfFields` set to exact scales. */
function randomBlocks(type: GgmlTypeName, blocks: number, halfFields: [number, number][], seed: number): Uint8Array {
  const { bytes: size } = ggmlBlockLayout[type];
  const rng = new Rng(seed);
  const bytes = new Uint8Array(blocks * size);
  for (let i = 0; i < bytes.length; i++) bytes[i] = rng.nextUint32() & 0xff;
  const view = new DataView(bytes.buffer);
  for (let b = 0; b < blocks; b++)
    for (const [offset, bits] of halfFields) view.setUint16(b * size + offset, bits, true);
  return bytes;
}

const int8 = (byte: number): number => (byte << 24) >> 24;
const f = Math.fround;

test('F32, F16 and BF16 decode little-endian floats', () => {
  const f32 = new Uint8Array(new Float32Array([1.5, -2.25]).buffer);
  assert.deepEqual([...dequantize('F32', f32, 2)], [1.5, -2.25]);
  assert.deepEqual([...dequantize('F16', Uint8Array.of(0x00, 0x3c, 0x00, 0xc1), 2)], [1, -2.5]);
  assert.deepEqual([...dequantize('BF16', Uint8Array.of(0xc0, 0x3f, 0x20, 0xc0), 2)], [1.5, -2.5]);
});

test('Q8_0: y = d·q with d the f16 at the start of each 34-byte block', () => {
  const bytes = randomBlocks('Q8_0', 2, [[0, half['0.5']]], 1);
  const out = dequantize('Q8_0', bytes, 64);
  for (let b = 0; b < 2; b++)
    for (let j = 0; j < 32; j++) assert.equal(out[b * 32 + j], 0.5 * int8(at(bytes, b * 34 + 2 + j)));
});

test('Q4_0: y[j] = d·(low nibble − 8), y[j+16] = d·(high nibble − 8)', () => {
  const bytes = randomBlocks('Q4_0', 2, [[0, half['-0.125']]], 2);
  const out = dequantize('Q4_0', bytes, 64);
  for (let b = 0; b < 2; b++) {
    for (let j = 0; j < 16; j++) {
      const q = at(bytes, b * 18 + 2 + j);
      assert.equal(out[b * 32 + j], -0.125 * ((q & 15) - 8));
      assert.equal(out[b * 32 + j + 16], -0.125 * ((q >> 4) - 8));
    }
  }
});

test('Q4_1: y = d·q + m', () => {
  const bytes = randomBlocks(
    'Q4_1',
    2,
    [
      [0, half['0.25']],
      [2, half['-0.125']],
    ],
    3,
  );
  const out = dequantize('Q4_1', bytes, 64);
  for (let b = 0; b < 2; b++) {
    for (let j = 0; j < 16; j++) {
      const q = at(bytes, b * 20 + 4 + j);
      assert.equal(out[b * 32 + j], 0.25 * (q & 15) - 0.125);
      assert.equal(out[b * 32 + j + 16], 0.25 * (q >> 4) - 0.125);
    }
  }
});

test('Q5_0 and Q5_1: the fifth bit of value j is bit j (low half) or j + 16 (high half) of qh', () => {
  for (const type of ['Q5_0', 'Q5_1'] as const) {
    const withMin = type === 'Q5_1';
    const size = ggmlBlockLayout[type].bytes;
    const bytes = randomBlocks(
      type,
      2,
      withMin
        ? [
            [0, half['0.5']],
            [2, half['0.25']],
          ]
        : [[0, half['0.5']]],
      4,
    );
    const out = dequantize(type, bytes, 64);
    const view = new DataView(bytes.buffer);
    for (let b = 0; b < 2; b++) {
      const qhAt = b * size + (withMin ? 4 : 2);
      const qh = view.getUint32(qhAt, true);
      for (let j = 0; j < 16; j++) {
        const q = at(bytes, qhAt + 4 + j);
        const x0 = (q & 15) | (((qh >>> j) & 1) << 4);
        const x1 = (q >> 4) | (((qh >>> (j + 16)) & 1) << 4);
        assert.equal(out[b * 32 + j], withMin ? 0.5 * x0 + 0.25 : 0.5 * (x0 - 16), `${type} ${b}/${j}`);
        assert.equal(out[b * 32 + j + 16], withMin ? 0.5 * x1 + 0.25 : 0.5 * (x1 - 16), `${type} ${b}/${j + 16}`);
      }
    }
  }
});

/** ggml-quants.c `get_scale_min_k4`, transliterated. */
function scaleMin(j: number, q: Uint8Array): [number, number] {
  return j < 4
    ? [at(q, j) & 63, at(q, j + 4) & 63]
    : [(at(q, j + 4) & 0xf) | ((at(q, j - 4) >> 6) << 4), (at(q, j + 4) >> 4) | ((at(q, j) >> 6) << 4)];
}

test('Q4_K and Q5_K: 256-value super-blocks, eight 6-bit scales and mins (ggml dequantize_row_q4_K / q5_K)', () => {
  for (const type of ['Q4_K', 'Q5_K'] as const) {
    const size = ggmlBlockLayout[type].bytes;
    const bytes = randomBlocks(
      type,
      2,
      [
        [0, half['1.5']],
        [2, half['0.25']],
      ],
      5,
    );
    const out = dequantize(type, bytes, 512);
    const expected: number[] = [];
    for (let b = 0; b < 2; b++) {
      const base = b * size;
      const scales = bytes.subarray(base + 4, base + 16);
      const qh = bytes.subarray(base + 16, base + 48);
      let ql = base + (type === 'Q5_K' ? 48 : 16);
      let is = 0;
      let u1 = 1;
      let u2 = 2;
      for (let j = 0; j < 256; j += 64) {
        const [sc1, m1] = scaleMin(is, scales);
        const [sc2, m2] = scaleMin(is + 1, scales);
        for (let l = 0; l < 32; l++)
          expected.push(
            f(f(1.5 * sc1) * ((at(bytes, ql + l) & 0xf) + (type === 'Q5_K' && at(qh, l) & u1 ? 16 : 0))) - f(0.25 * m1),
          );
        for (let l = 0; l < 32; l++)
          expected.push(
            f(f(1.5 * sc2) * ((at(bytes, ql + l) >> 4) + (type === 'Q5_K' && at(qh, l) & u2 ? 16 : 0))) - f(0.25 * m2),
          );
        ql += 32;
        is += 2;
        u1 <<= 2;
        u2 <<= 2;
      }
    }
    assert.deepEqual([...out], expected.map(f), type);
  }
});

test('Q6_K: 256 values from 4 low bits, 2 high bits and 16 int8 scales (ggml dequantize_row_q6_K)', () => {
  const bytes = randomBlocks('Q6_K', 2, [[208, half['-0.125']]], 6);
  const out = dequantize('Q6_K', bytes, 512);
  const expected = new Array<number>(512);
  for (let b = 0; b < 2; b++) {
    let ql = b * 210;
    let qh = b * 210 + 128;
    let sc = b * 210 + 192;
    let y = b * 256;
    for (let n = 0; n < 256; n += 128) {
      for (let l = 0; l < 32; l++) {
        const is = Math.floor(l / 16);
        const q1 = ((at(bytes, ql + l) & 0xf) | (((at(bytes, qh + l) >> 0) & 3) << 4)) - 32;
        const q2 = ((at(bytes, ql + l + 32) & 0xf) | (((at(bytes, qh + l) >> 2) & 3) << 4)) - 32;
        const q3 = ((at(bytes, ql + l) >> 4) | (((at(bytes, qh + l) >> 4) & 3) << 4)) - 32;
        const q4 = ((at(bytes, ql + l + 32) >> 4) | (((at(bytes, qh + l) >> 6) & 3) << 4)) - 32;
        expected[y + l] = f(f(-0.125 * int8(at(bytes, sc + is))) * q1);
        expected[y + l + 32] = f(f(-0.125 * int8(at(bytes, sc + is + 2))) * q2);
        expected[y + l + 64] = f(f(-0.125 * int8(at(bytes, sc + is + 4))) * q3);
        expected[y + l + 96] = f(f(-0.125 * int8(at(bytes, sc + is + 6))) * q4);
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
  assert.deepEqual([...out], expected);
});

test('an unsupported type id or a partial block is a CheckpointError naming the alternatives', () => {
  assert.throws(
    () => ggmlTypeName(10, { tensor: 'blk.0.attn_q.weight' }),
    (error: unknown) =>
      error instanceof CheckpointError && /GGML type 10 is not supported; supported: F32, F16/.test(error.message),
  );
  assert.throws(() => dequantize('Q4_K', new Uint8Array(144), 128), CheckpointError);
  assert.throws(() => dequantize('Q8_0', new Uint8Array(33), 32), CheckpointError);
});
