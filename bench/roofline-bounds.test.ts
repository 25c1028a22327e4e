import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  boundOf,
  decodeStepWork,
  forwardFlops,
  fractionText,
  matmulParameters,
  scoringWork,
  trainStepWork,
} from './roofline-bounds.ts';

const smol = { vocab: 49152, hidden: 576, layers: 30, heads: 9, kvHeads: 3, intermediate: 1536 };
const roofline = { peakGflops: 100, bandwidthGBps: 10 };

test('matmulParameters: SmolLM2-135M reads 134,479,872 weights a token (30 × 3,538,944 in the blocks + the 49,152 × 576 head)', () => {
  assert.equal(matmulParameters(smol), 30 * (2 * 576 * 576 + 2 * 576 * 192 + 3 * 576 * 1536) + 49152 * 576);
  assert.equal(matmulParameters(smol), 134_479_872);
});

test('forwardFlops: 2 × weights + 4 × layers × d_model × context', () => {
  assert.equal(forwardFlops(smol, 0), 2 * 134_479_872);
  assert.equal(forwardFlops(smol, 100) - forwardFlops(smol, 0), 4 * 30 * 576 * 100);
});

test('decode at batch 1 is memory-bound: the fp32 weights and the KV cache read once per token', () => {
  const work = decodeStepWork(smol, { batch: 1, context: 96, bytesPerWeight: 4, bytesPerCached: 4 });
  assert.equal(work.bytes, 134_479_872 * 4 + 96 * 30 * 2 * 192 * 4);
  const bound = boundOf(work, roofline);
  assert.equal(bound.bound, 'memory');
  assert.ok(Math.abs(bound.seconds - work.bytes / 10e9) < 1e-12);
  // a wide batch shares the weights' read and turns FLOP-bound
  assert.equal(
    boundOf(decodeStepWork(smol, { batch: 256, context: 96, bytesPerWeight: 0.625, bytesPerCached: 2 }), roofline)
      .bound,
    'FLOP',
  );
});

test('scoring and train steps are FLOP-bound multiples of the forward', () => {
  const forward = scoringWork(smol, 16, 256);
  assert.equal(forward.flops, 16 * 256 * forwardFlops(smol, 128));
  assert.equal(boundOf(forward, roofline).bound, 'FLOP');
  assert.equal(trainStepWork(smol, 16, 256, 2).flops, 2 * forward.flops);
});

test('fractionText: the least time over the measured time, with its bound; a dash without a roofline or a time', () => {
  const work = { flops: 50e9, bytes: 1e9 }; // 0.5 s of FLOPs, 0.1 s of memory
  assert.equal(fractionText(work, 2, roofline), '25% (FLOP)');
  assert.equal(fractionText(work, 2, null), '—');
  assert.equal(fractionText(work, Number.NaN, roofline), '—');
});
