import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../core/errors.ts';
import { loraConfigSchema, loraScale, mergeLora } from './lora.ts';

const lora = loraConfigSchema.parse({ rank: 2, alpha: 4, targetModules: ['q_proj'] });

test('mergeLora folds W + α/r · A B into the adapted weight and shares the others', () => {
  // W [3, 2], A [3, 2], B [2, 2]: every entry checked against the sum written out.
  const w = { shape: [3, 2], data: Float32Array.of(1, 2, 3, 4, 5, 6) };
  const a = { shape: [3, 2], data: Float32Array.of(1, 0, 0, 1, 1, -1) };
  const b = { shape: [2, 2], data: Float32Array.of(0.5, 1, -1, 2) };
  const norm = { shape: [2], data: Float32Array.of(1, 1) };
  const base = new Map([
    ['layers.0.wq', w],
    ['layers.0.attnNorm', norm],
  ]);
  const merged = mergeLora(
    base,
    new Map([
      ['layers.0.wq.loraA', a],
      ['layers.0.wq.loraB', b],
    ]),
    lora,
  );
  const s = loraScale(lora);
  assert.equal(s, 2);
  const expected = [1 + s * 0.5, 2 + s * 1, 3 + s * -1, 4 + s * 2, 5 + s * (0.5 + 1), 6 + s * (1 - 2)];
  assert.deepEqual([...(merged.get('layers.0.wq')?.data ?? [])], expected);
  assert.deepEqual([...w.data], [1, 2, 3, 4, 5, 6], 'the base weight is not changed');
  assert.equal(merged.get('layers.0.attnNorm'), norm);
});

test('mergeLora refuses an adapter whose A · B does not fit the weight', () => {
  const base = new Map([['layers.0.wq', { shape: [3, 2], data: new Float32Array(6) }]]);
  const adapters = new Map([
    ['layers.0.wq.loraA', { shape: [4, 2], data: new Float32Array(8) }],
    ['layers.0.wq.loraB', { shape: [2, 2], data: new Float32Array(4) }],
  ]);
  assert.throws(
    () => mergeLora(base, adapters, lora),
    (error: unknown) => {
      assert.ok(error instanceof InvalidArgumentError);
      assert.match(error.message, /A \[4, 2\] · B \[2, 2\] does not fit the weight \[3, 2\]/);
      return true;
    },
  );
});
