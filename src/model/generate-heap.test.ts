/**
 * Generation keeps jax-js's wasm heap bounded (generate.ts): its allocator never returns memory and
 * reuses a buffer only for the same size, so every new shape grows the heap for good. A run's
 * batches shrink and its prompts grow turn by turn; a second run of other sizes in the same
 * buckets must reuse the first one's buffers — the heap grows by a small fraction of the first at most.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generate } from './generate.ts';
import { TransformerModel } from './model.ts';

/** Counts the wasm heap's growth (jax-js grows its memory exactly to what the bump allocator needs). */
function heapGrowth(): { bytes: () => number } {
  // WebAssembly's types are not in this project's lib; only Memory.prototype.grow is used.
  type Memory = { grow(pages: number): number };
  const memory = (globalThis as unknown as { WebAssembly: { Memory: { prototype: Memory } } }).WebAssembly.Memory;
  const grow = memory.prototype.grow;
  let bytes = 0;
  memory.prototype.grow = function (this: Memory, pages: number) {
    bytes += pages * 65536;
    return grow.call(this, pages);
  };
  return { bytes: () => bytes };
}

/** One episode's turns: rows still running and their prompt length. */
async function episode(model: TransformerModel, turns: [rows: number, length: number][]): Promise<void> {
  for (const [rows, length] of turns) {
    const prompts = Array.from({ length: rows }, (_, row) =>
      Array.from({ length: length - (row % 5) }, (_, t) => 3 + ((t * 7 + row) % 250)),
    );
    await generate(model, prompts, { maxNewTokens: 8, temperature: 1, seed: 1 });
  }
}

test('a second run of other batch sizes and prompt lengths in the same buckets reuses the heap', async () => {
  const model = await TransformerModel.create(
    { hiddenSize: 32, numLayers: 2, numHeads: 2, numKvHeads: 2, intermediateSize: 64, maxSeqLen: 512 },
    { seed: 1 },
  );
  const growth = heapGrowth();
  await episode(model, [
    [100, 40],
    [90, 90],
    [75, 140],
    [60, 200],
    [40, 300],
    [20, 420],
  ]);
  const first = growth.bytes();
  await episode(model, [
    [97, 45],
    [85, 97],
    [70, 150],
    [57, 230],
    [37, 330],
    [17, 440],
  ]);
  const second = growth.bytes() - first;
  // Worker timing decides how many buffers of a size are live at once, so a few MB may still come.
  assert.ok(first > 0, 'the first run allocated');
  assert.ok(second <= first / 20, `the second run grew the heap by ${second} bytes (the first by ${first})`);
});
