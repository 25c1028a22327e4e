import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CACHE_CHUNK, DecodeBias, DecodeCache } from './decode-cache.ts';

const shape = { layers: 2, rows: 3, kvHeads: 2, headDimension: 4 };

/** A run's outputs: `rows` output rows of `tokens` tokens, value = marker + flat index. */
function runOutput(rows: number, tokens: number, marker: number) {
  const size = rows * shape.kvHeads * tokens * shape.headDimension;
  const out: Record<string, { data: Float32Array }> = {};
  for (let layer = 0; layer < shape.layers; layer++) {
    out[`key.${layer}`] = { data: Float32Array.from({ length: size }, (_, i) => marker + layer * 1000 + i) };
    out[`value.${layer}`] = { data: Float32Array.from({ length: size }, (_, i) => -(marker + layer * 1000 + i)) };
  }
  return out;
}

/** keys[layer][row, head, slot, :] */
function slotOf(cache: DecodeCache, layer: number, row: number, head: number, slot: number): number[] {
  const hd = shape.headDimension;
  const from = ((row * shape.kvHeads + head) * cache.slots + slot) * hd;
  return Array.from(cache.keys[layer]?.subarray(from, from + hd) ?? []);
}

test('DecodeCache: one output row written into every row that shares it; growth keeps the written slots', () => {
  const cache = new DecodeCache(shape, 5, 100);
  cache.write(runOutput(2, 3, 0), [[0, 2], [1]], { tokens: 3, start: 0 }); // a prefill of 3 tokens, rows 0 and 2 share
  assert.deepEqual(slotOf(cache, 1, 2, 1, 2), slotOf(cache, 1, 0, 1, 2));
  assert.deepEqual(slotOf(cache, 1, 0, 1, 2), [1000 + 20, 1000 + 21, 1000 + 22, 1000 + 23]); // (r0·KV + h1)·3 + t2, ·hd
  const before = [0, 1, 2].map((row) => slotOf(cache, 0, row, 1, 2));
  assert.equal(cache.ensure(4), false);
  assert.equal(cache.ensure(5), true);
  assert.equal(cache.slots, 5 + CACHE_CHUNK);
  assert.deepEqual(
    [0, 1, 2].map((row) => slotOf(cache, 0, row, 1, 2)),
    before,
  );
  cache.write(runOutput(3, 1, 5000), [[0], [1], [2]], { tokens: 1, start: 5 });
  assert.deepEqual(slotOf(cache, 0, 2, 0, 5), [5016, 5017, 5018, 5019]);
  assert.ok(cache.ensure(99) && cache.slots === 100, 'grows to the slot asked for, at most maxSlots');
  assert.deepEqual(slotOf(cache, 0, 2, 0, 5), [5016, 5017, 5018, 5019]);
  assert.equal(cache.values[0]?.length, 3 * 2 * 100 * 4);
});

test('DecodeBias: each row attends its own filled slots and the new token', () => {
  const bias = new DecodeBias([2, 0], -1e9);
  bias.reset(6, 4);
  const m = -1e9;
  assert.deepEqual(Array.from(bias.data), [m, m, 0, 0, m, m, 0, 0, 0, 0, 0, m, m, 0]);
  bias.open(4);
  assert.deepEqual(Array.from(bias.data.subarray(0, 7)), [m, m, 0, 0, 0, m, 0]);
});

test('DecodeCache.keepRows: the kept rows, in the order given, with their slots', () => {
  const cache = new DecodeCache(shape, 4, 100);
  cache.write(runOutput(3, 2, 0), [[0], [1], [2]], { tokens: 2, start: 0 });
  const rowTwo = slotOf(cache, 1, 2, 1, 1);
  const rowZero = slotOf(cache, 1, 0, 0, 0);
  cache.keepRows([2, 0]);
  assert.deepEqual(slotOf(cache, 1, 0, 1, 1), rowTwo);
  assert.deepEqual(slotOf(cache, 1, 1, 0, 0), rowZero);
  assert.equal(cache.keys[1]?.length, 2 * 2 * 4 * 4);
  cache.write(runOutput(2, 1, 900), [[0], [1]], { tokens: 1, start: 3 });
  assert.ok(cache.ensure(4));
  assert.deepEqual(slotOf(cache, 1, 0, 1, 1), rowTwo);
});
