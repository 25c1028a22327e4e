import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runNodeChild } from './engine-spawn.ts';

test('runNodeChild: a child that fails is reported and left out (null), not a crash of the bench', () => {
  const errors: string[] = [];
  const original = console.error;
  console.error = (message: string) => errors.push(message);
  try {
    assert.equal(runNodeChild('no-such-kind', {}, 1), null);
  } finally {
    console.error = original;
  }
  assert.match(errors.join('\n'), /no-such-kind \(1 threads\) failed/);
  assert.match(
    errors.join('\n'),
    /unknown bench:engine child kind "no-such-kind"; allowed: roofline, tiny, inference, llama, step, export/,
  );
});

test('runNodeChild: a child measures and returns its Measurement with its own peak RSS', () => {
  const measurement = runNodeChild('roofline', { matmulSize: 64, streamMegabytes: 1, reps: 1 }, 1);
  assert.ok(measurement !== null);
  assert.equal(measurement.threads, '1');
  assert.ok((measurement.figures.matmulGflops ?? 0) > 0 && (measurement.figures.copyGBps ?? 0) > 0);
  assert.ok(measurement.peakRssMb > 10);
});
