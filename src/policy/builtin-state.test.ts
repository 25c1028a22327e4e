import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { rlLoss } from '../algorithms/rl-loss.ts';
import { Rng } from '../core/rng.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import type { HostParams } from '../model/config.ts';
import { serializeSafetensors } from '../model/safetensors.ts';
import {
  builtinStateFormat,
  captureBuiltinState,
  parseBuiltinState,
  restoreBuiltinModel,
  serializeBuiltinState,
} from './builtin-state.ts';

const config = {
  vocabSize: 40,
  hiddenSize: 16,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 32,
  maxSeqLen: 16,
  valueHead: true,
};
const sequences = [
  [1, 5, 9, 2, 7, 3],
  [4, 8, 6, 1],
];

/** A LoRA model with a value head after one PPO step with a value loss (the head moves). */
async function trainedLoraModel(): Promise<TransformerModel> {
  const model = await TransformerModel.create(config, { seed: 3, lora: { rank: 2 } });
  const rng = new Rng(7);
  const draw = () => sequences.map((row) => Float32Array.from(row, (_, t) => (t > 0 ? rng.next() - 0.5 : 0)));
  const old = await model.score(sequences);
  const loss = rlLoss({
    oldLogprobs: old.logprobs,
    oldValues: old.values,
    advantages: draw(),
    returns: draw(),
    lossMask: sequences.map((row) => Float32Array.from(row, (_, t) => (t > 0 ? 1 : 0))),
  });
  await model.trainStep(sequences, loss, { learningRate: 0.05 });
  return model;
}

function assertSameParams(actual: HostParams | null, expected: HostParams | null, what: string): void {
  assert.ok(actual !== null && expected !== null, `${what}: both present`);
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${what}: names`);
  for (const [name, tensor] of expected) assert.deepEqual(actual.get(name)?.data, tensor.data, `${what}: ${name}`);
}

test('a LoRA state saves and restores the trained value head and its AdamW moments bit for bit', async () => {
  const model = await trainedLoraModel();
  const base = await model.baseParams();
  const head = await model.valueHeadParams();
  assert.notDeepEqual(head?.get('valueHead.w')?.data, base.get('valueHead.w')?.data, 'the head trained');
  const state = parseBuiltinState(serializeBuiltinState(await captureBuiltinState(model)));
  assert.ok(state.lora?.valueHead?.has('valueHead.w'), 'the state holds the value head');
  const restored = await restoreBuiltinModel(state, { baseParams: base });
  assertSameParams(await restored.valueHeadParams(), head, 'value head');
  assertSameParams(await restored.adapterParams(), await model.adapterParams(), 'adapters');
  const [moments, restoredMoments] = [await model.optimizerState(), await restored.optimizerState()];
  assert.equal(restoredMoments.step, 1);
  assertSameParams(restoredMoments.m, moments.m, 'adam m');
  assertSameParams(restoredMoments.v, moments.v, 'adam v');
  assert.ok(
    moments.m.get('valueHead.w')?.data.some((x) => x !== 0),
    'the head has moments',
  );
  assert.deepEqual((await restored.score(sequences)).values, (await model.score(sequences)).values);
  await Promise.all([model.release(), restored.release()]);
});

test('an older LoRA state without the value head restores the base head with fresh moments and a warning', async () => {
  const model = await trainedLoraModel();
  const state = await captureBuiltinState(model);
  assert.ok(state.lora !== undefined && state.optimizer !== undefined);
  delete state.lora.valueHead;
  for (const moments of [state.optimizer.m, state.optimizer.v])
    for (const name of ['valueHead.w', 'valueHead.b']) moments.delete(name);
  const warned = once(process, 'warning');
  const base = await model.baseParams();
  const restored = await restoreBuiltinModel(parseBuiltinState(serializeBuiltinState(state)), { baseParams: base });
  const [warning] = (await warned) as [Error & { code?: string }];
  assert.equal(warning.code, 'AGENTRL_STATE_WITHOUT_VALUE_HEAD');
  assert.match(warning.message, /from step 1 has no moments for the LoRA value head/);
  assert.deepEqual((await restored.valueHeadParams())?.get('valueHead.w')?.data, base.get('valueHead.w')?.data);
  const moments = await restored.optimizerState();
  assert.equal(moments.step, 1);
  assert.ok(
    moments.m.get('valueHead.w')?.data.every((x) => x === 0),
    'fresh first moments',
  );
  assertSameParams(
    new Map([...moments.v].filter(([name]) => !name.startsWith('valueHead'))),
    state.optimizer.v,
    'the adapters keep theirs',
  );
  // A half-present head (moments in m only) is no older state: refused by name.
  state.optimizer.m.set('valueHead.w', { shape: [16, 1], data: new Float32Array(16) });
  assert.throws(() => restored.loadOptimizerState(state.optimizer!), /valueHead\.(w|b)/);
  await Promise.all([model.release(), restored.release()]);
});

test('baseQuantization round-trips through the state (a resumed int8 run generates on int8); float32 writes none; unknown ones are refused', async () => {
  const int8 = await TransformerModel.create(config, { seed: 1, lora: { rank: 2 }, baseQuantization: 'int8' });
  const bytes = serializeBuiltinState(await captureBuiltinState(int8));
  const state = parseBuiltinState(bytes);
  assert.equal(state.baseQuantization, 'int8');
  const restored = await restoreBuiltinModel(state, { baseParams: await int8.baseParams() });
  assert.equal(restored.baseQuantization, 'int8');
  const full = await TransformerModel.create(config, { seed: 1, baseQuantization: 'int8' });
  assert.equal(
    (await restoreBuiltinModel(parseBuiltinState(serializeBuiltinState(await captureBuiltinState(full)))))
      .baseQuantization,
    'int8',
  );
  const plain = await TransformerModel.create(config, { seed: 1 });
  const plainState = parseBuiltinState(serializeBuiltinState(await captureBuiltinState(plain)));
  assert.equal(plainState.baseQuantization, undefined);
  assert.equal((await restoreBuiltinModel(plainState)).baseQuantization, 'float32');
  const bad = serializeSafetensors(new Map(), {
    format: builtinStateFormat,
    modelConfig: JSON.stringify(plain.config),
    baseQuantization: 'int3',
  });
  assert.throws(
    () => parseBuiltinState(bad, { source: 'bad.safetensors' }),
    /bad\.safetensors: baseQuantization must be one of float32, int8, int4; got int3/,
  );
  await Promise.all([int8.release(), restored.release(), full.release(), plain.release()]);
});
