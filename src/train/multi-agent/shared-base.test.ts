import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sftLoss } from '../../algorithms/rl-loss.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import type { HostParams } from '../../model/config.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import type { TrainablePolicy } from '../../policy/types.ts';
import { sharedBaseRestorer } from './shared-base.ts';
import { tinyConfig } from './role-test-fixture.ts';

const batch = [
  [1, 2, 3, 4, 5, 6],
  [7, 8, 9, 10],
];
const mask = batch.map((row) => Float64Array.from(row, (_, t) => (t >= 1 ? 1 : 0)));
const arrays = (params: HostParams) => [...params.values()].map((t) => t.data.slice());
const same = (a: Float32Array[], b: Float32Array[]) => a.every((x, i) => x.every((v, j) => v === b[i]?.[j]));

/** A trained LoRA role's saved state (adapters moved, one AdamW step) over `base`. */
async function roleState(base: HostParams, seed: number): Promise<Uint8Array> {
  const model = await TransformerModel.fromParams(tinyConfig, base, { lora: { rank: 4 }, seed });
  await model.trainStep(batch, sftLoss(mask), { learningRate: 5e-2 });
  return new BuiltinPolicy({ model }).saveState();
}

test('LoRA roles restore as forks of the first: one backend restore, each its own state, the base never moves', async () => {
  const base = await (await TransformerModel.create(tinyConfig, { seed: 7 })).hostParams();
  const states = [await roleState(base, 1), await roleState(base, 2), await roleState(base, 3)];
  let restored = 0;
  const restore = sharedBaseRestorer((state) => {
    restored += 1;
    return BuiltinPolicy.fromState(state, { baseParams: base });
  });
  const policies = [];
  for (const state of states) policies.push((await restore(state)) as BuiltinPolicy);
  assert.equal(restored, 1, 'only the first goes through the backend; the others fork its model');
  for (const [i, policy] of policies.entries()) {
    const expected = await BuiltinPolicy.fromState(states[i] ?? new Uint8Array(), { baseParams: base });
    assert.ok(
      same(arrays(await policy.model.adapterParams()), arrays(await expected.model.adapterParams())),
      `role ${i} adapters`,
    );
    assert.equal((await policy.model.optimizerState()).step, 1, `role ${i} moments restored`);
  }
  // Train two roles; the third's adapters and everyone's base stay bit-identical, moments are never shared.
  const [first, second, third] = policies;
  if (first === undefined || second === undefined || third === undefined) throw new TypeError('three roles');
  const thirdBefore = arrays(await third.model.adapterParams());
  const baseBefore = arrays(await first.model.baseParams());
  await first.model.trainStep(batch, sftLoss(mask), { learningRate: 5e-2 });
  await second.model.trainStep(batch, sftLoss(mask), { learningRate: 5e-2 });
  assert.equal((await first.model.optimizerState()).step, 2);
  assert.equal((await third.model.optimizerState()).step, 1);
  assert.ok(same(thirdBefore, arrays(await third.model.adapterParams())), "the untrained role's adapters did not move");
  for (const policy of policies)
    assert.ok(same(baseBefore, arrays(await policy.model.baseParams())), 'the shared base is bit-identical');
  assert.ok(same(baseBefore, arrays(base)), 'and equals the base the roles were saved over');
});

test('full fine-tuning (each role its own weights) goes through the backend every time', async () => {
  const model = await TransformerModel.create(tinyConfig, { seed: 7 });
  const state = await new BuiltinPolicy({ model }).saveState();
  let restored = 0;
  const restore = sharedBaseRestorer((bytes): Promise<TrainablePolicy> => {
    restored += 1;
    return BuiltinPolicy.fromState(bytes);
  });
  await restore(state);
  await restore(state);
  assert.equal(restored, 2);
});
