import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../core/rng.ts';
import { modelConfigSchema } from './config.ts';
import { dropoutMaskData, loraConfigSchema, loraShapes } from './lora.ts';

const config = modelConfigSchema.parse({ vocabSize: 40, hiddenSize: 16, numLayers: 2, numHeads: 4, numKvHeads: 2 });

test('dropout masks: one [tokens, in] mask per adapted linear, each value 0 or 1/(1−p), about p of them 0', () => {
  const lora = loraConfigSchema.parse({ rank: 4, dropout: 0.25, targetModules: ['q_proj', 'down_proj'] });
  const masks = dropoutMaskData(config, lora, 64, new Rng(7));
  const adapted = [...loraShapes(config, lora).keys()].filter((name) => name.endsWith('.loraA'));
  assert.deepEqual(
    [...masks.keys()],
    adapted.map((name) => name.replace('.loraA', '.loraMask')),
  );
  let zeros = 0;
  let total = 0;
  for (const [name, mask] of masks) {
    const input = loraShapes(config, lora).get(name.replace('.loraMask', '.loraA'))?.[0];
    assert.deepEqual(mask.shape, [64, input]);
    for (const value of mask.data) {
      assert.ok(value === 0 || Math.abs(value - 1 / 0.75) < 1e-6, `${name}: ${value}`);
      zeros += value === 0 ? 1 : 0;
      total += 1;
    }
  }
  assert.ok(Math.abs(zeros / total - 0.25) < 0.03, `dropped ${zeros} of ${total}`);
});

test('dropout masks replay under a seed and differ under another; p = 0 keeps every input', () => {
  const lora = loraConfigSchema.parse({ rank: 2, dropout: 0.5 });
  const draw = (seed: number) => [...dropoutMaskData(config, lora, 8, new Rng(seed)).values()].map((m) => [...m.data]);
  assert.deepEqual(draw(3), draw(3));
  assert.notDeepEqual(draw(3), draw(4));
  const none = dropoutMaskData(config, loraConfigSchema.parse({ rank: 2 }), 8, new Rng(3));
  for (const mask of none.values()) assert.ok(mask.data.every((value) => value === 1));
});
