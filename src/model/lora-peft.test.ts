import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TransformerModel } from '../engine/transformer-model.ts';
import { loadAdapterFolder, loadAdapterTensors, toPeftTensors } from './lora-peft.ts';
import { readSafetensors } from './safetensors.ts';

const config = {
  vocabSize: 32,
  hiddenSize: 8,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 16,
  maxSeqLen: 16,
  valueHead: true,
};

test("saveAdapter with a LoRA value head writes it as PEFT's modules_to_save (v_head.summary, [1, D] and [1]) and reads it back", async () => {
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-peft-head-'));
  const model = await TransformerModel.create(config, { seed: 2, lora: { rank: 2 } });
  try {
    // Distinct values (a fresh head is zero), so a transpose or a swapped key shows.
    model.setValueHead(
      new Map([
        ['valueHead.w', { shape: [8, 1], data: Float32Array.from({ length: 8 }, (_, i) => 0.1 * i - 0.3) }],
        ['valueHead.b', { shape: [1], data: Float32Array.of(0.25) }],
      ]),
    );
    const head = await model.valueHeadParams();
    assert.ok(head !== null);
    await model.saveAdapter(folder);
    // PeftModel.from_pretrained of such a folder onto a Llama with TRL's v_head.summary (PEFT 0.21.2) loads
    // both tensors equal and warns of nothing (checked by hand, see docs/lora.md).
    const adapterConfig = JSON.parse(await readFile(join(folder, 'adapter_config.json'), 'utf8'));
    assert.deepEqual(adapterConfig.modules_to_save, ['v_head']);
    const { tensors } = await readSafetensors(join(folder, 'adapter_model.safetensors'));
    assert.deepEqual(tensors.get('base_model.model.v_head.summary.weight')?.shape, [1, 8]);
    assert.deepEqual(tensors.get('base_model.model.v_head.summary.bias')?.shape, [1]);
    assert.deepEqual([...(tensors.get('base_model.model.v_head.summary.weight')?.data ?? [])].slice(0, 2), [
      Math.fround(-0.3),
      Math.fround(-0.2),
    ]);
    const read = await loadAdapterFolder(folder);
    for (const [name, tensor] of head) {
      assert.deepEqual(read.valueHead?.get(name)?.shape, tensor.shape, name);
      assert.deepEqual(read.valueHead?.get(name)?.data, tensor.data, name);
    }
    const names = async (params: Promise<Map<string, unknown>>) => [...(await params).keys()].sort();
    assert.deepEqual(await names(loadAdapterTensors(folder)), await names(model.adapterParams()), 'the adapters alone');
  } finally {
    await model.release();
    await rm(folder, { recursive: true, force: true });
  }
});

test('without a value head the folder has no modules_to_save; an unknown head name is refused', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-peft-plain-'));
  const model = await TransformerModel.create({ ...config, valueHead: false }, { seed: 2, lora: { rank: 2 } });
  try {
    assert.equal(await model.valueHeadParams(), null);
    await model.saveAdapter(folder);
    assert.equal(JSON.parse(await readFile(join(folder, 'adapter_config.json'), 'utf8')).modules_to_save, null);
    assert.equal((await loadAdapterFolder(folder)).valueHead, undefined);
    assert.throws(
      () => toPeftTensors(new Map(), new Map([['valueHead.x', { shape: [1], data: new Float32Array(1) }]])),
      /not a value head name: valueHead\.x/,
    );
  } finally {
    await model.release();
    await rm(folder, { recursive: true, force: true });
  }
});
