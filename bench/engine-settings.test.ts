import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AgentRlError } from '../src/core/errors.ts';
import { benchSettings } from './engine-settings.ts';
import { tokenRows } from './engine-workload.ts';
import { bestOf, ratioTarget } from './engine-report.ts';

test('benchSettings: the issue-28 workload by default', () => {
  const settings = benchSettings({});
  assert.deepEqual(settings.sections, ['roofline', 'tiny', 'generation', 'scoring', 'step']);
  assert.deepEqual(settings.threads, [1, 2]);
  assert.deepEqual(settings.genBatches, [1, 16, 64]);
  assert.deepEqual([settings.genPrompt, settings.genNew], [32, 128]);
  assert.deepEqual(
    [settings.scoreRows, settings.scoreLength, settings.stepRows, settings.stepLength],
    [16, 256, 4, 256],
  );
  assert.deepEqual(settings.weights, ['real', 'random']);
});

test('benchSettings: environment variables override; a bad one is an error naming the variable', () => {
  const settings = benchSettings({ BENCH_THREADS: '2', BENCH_SECTIONS: 'step', BENCH_REPS: '1', BENCH_GEN_NEW: '' });
  assert.deepEqual([settings.threads, settings.sections, settings.reps, settings.genNew], [[2], ['step'], 1, 128]);
  assert.throws(
    () => benchSettings({ BENCH_THREADS: '0,x', BENCH_SECTIONS: 'speed' }),
    (error: unknown) =>
      error instanceof AgentRlError &&
      /BENCH_THREADS/.test(error.message) &&
      /BENCH_SECTIONS.*roofline/.test(error.message),
  );
});

test('tokenRows: the seeded stream every child and the Python peers share', () => {
  assert.deepEqual(tokenRows(2, 3, 1000), tokenRows(2, 3, 1000));
  assert.ok(
    tokenRows(4, 8, 7)
      .flat()
      .every((id) => id >= 0 && id < 7),
  );
  assert.notDeepEqual(tokenRows(1, 8, 1000, 1), tokenRows(1, 8, 1000, 2));
});

test('bestOf and ratioTarget: the best setting of each system, met / not met / not measured', () => {
  const runs = [1, 2].map((threads) => ({
    system: 's',
    threads: String(threads),
    figures: { rate: threads * 10, time: 3 - threads },
    peakRssMb: 1,
  }));
  assert.equal(bestOf(runs, 'rate', 'higher')?.value, 20);
  assert.equal(bestOf(runs, 'time', 'lower')?.measurement.threads, '2');
  assert.equal(bestOf(runs, 'missing', 'lower'), undefined);
  assert.equal(ratioTarget('x', 20, 10, '≥', 1).met, true);
  assert.equal(ratioTarget('x', 20, 10, '≤', 1).met, false);
  assert.equal(ratioTarget('x', undefined, 10, '≤', 1).met, undefined);
});
