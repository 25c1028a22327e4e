import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../core/indexing.ts';
import type { HostParams } from '../../model/config.ts';
import { hostClipAndAdamW, type HostAdamState } from './host-adamw.ts';

const one = (...values: number[]): HostParams =>
  new Map(values.map((x, i) => [`w${i}`, { shape: [1], data: Float32Array.of(x) }]));
const value = (params: HostParams, name: string) => at(params.get(name)?.data ?? [], 0);

test('AdamW step by hand: m̂/(√v̂ + ε) = sign at step 1, decoupled decay only on the decayed arrays', () => {
  const params = one(1, 1);
  const state: HostAdamState = { step: 0, m: one(0, 0), v: one(0, 0) };
  const norm = hostClipAndAdamW(
    params,
    state,
    one(0.5, 0.5),
    { learningRate: 0.1, weightDecay: 0.1, maxGradNorm: 0 },
    {
      names: ['w0', 'w1'],
      decayed: new Set(['w0']),
    },
  );
  assert.ok(Math.abs(norm - Math.SQRT1_2) < 1e-7);
  // m = 0.05, v = 0.0125; m̂ = 0.5, v̂ = 0.25: update 1 (+ λθ = 0.1 on w0).
  assert.ok(Math.abs(value(params, 'w0') - 0.89) < 1e-6, `${value(params, 'w0')}`);
  assert.ok(Math.abs(value(params, 'w1') - 0.9) < 1e-6);
  assert.ok(Math.abs(value(state.m, 'w0') - 0.05) < 1e-7 && Math.abs(value(state.v, 'w0') - 0.0125) < 1e-7);
  assert.equal(state.step, 1);
});

test('global-norm clipping scales every gradient by c / (‖g‖ + 1e-6) and returns the pre-clip norm', () => {
  const state: HostAdamState = { step: 0, m: one(0, 0), v: one(0, 0) };
  const norm = hostClipAndAdamW(
    one(0, 0),
    state,
    one(3, 4),
    { learningRate: 0.1, maxGradNorm: 1 },
    {
      names: ['w0', 'w1'],
      decayed: new Set(),
    },
  );
  assert.ok(Math.abs(norm - 5) < 1e-6);
  assert.ok(Math.abs(value(state.m, 'w0') - 0.1 * 0.6) < 1e-6 && Math.abs(value(state.m, 'w1') - 0.1 * 0.8) < 1e-6);
});

test('options that would corrupt the arrays are refused by name, before anything changes', () => {
  for (const [options, pattern] of [
    [{ learningRate: Number.NaN }, /learningRate/],
    [{ learningRate: -1 }, /learningRate/],
    [{ learningRate: 0.1, beta2: 1 }, /beta2/],
    [{ learningRate: 0.1, epsilon: 0 }, /epsilon/],
    [{ learningRate: 0.1, maxGradNorm: Number.POSITIVE_INFINITY }, /maxGradNorm/],
  ] as const) {
    const params = one(1);
    const state: HostAdamState = { step: 0, m: one(0), v: one(0) };
    assert.throws(
      () => hostClipAndAdamW(params, state, one(1), options, { names: ['w0'], decayed: new Set() }),
      pattern,
    );
    assert.equal(value(params, 'w0'), 1);
    assert.equal(state.step, 0);
  }
});

test('each trained array is replaced, not written in place: a reader holding the old array keeps consistent values', () => {
  const params = one(1);
  const held = params.get('w0')?.data;
  const state: HostAdamState = { step: 0, m: one(0), v: one(0) };
  hostClipAndAdamW(params, state, one(1), { learningRate: 0.1 }, { names: ['w0'], decayed: new Set() });
  assert.equal(at(held ?? [], 0), 1);
  assert.ok(Math.abs(value(params, 'w0') - 0.9) < 1e-6);
});
