import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../core/rng.ts';
import type { TokenLoss } from '../core/loss.ts';
import { TransformerModel } from './transformer-model.ts';
import { loadAdapterTensors } from '../model/lora-peft.ts';
import { generate } from './generate.ts';
import { readSafetensors } from '../model/safetensors.ts';
import type { HostParams, ModelConfigInput } from '../model/config.ts';
import { at } from '../core/indexing.ts';
import { tinyModelConfig, tinyLoraConfig } from './tiny-model-fixture.ts';

const tiny: ModelConfigInput = { ...tinyModelConfig, maxSeqLen: 32 };

function sequences(seed: number, count: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(4, 12) }, () => rng.int(40)));
}

/** −Σ logπ over every token after the first: pushes the model towards the batch. */
const nll: TokenLoss = {
  name: 'negative-log-likelihood',
  dependsOnCurrent: false,
  compute: ({ logprobs }) => ({
    loss: 0,
    gradLogprobs: logprobs.map((row) => Float32Array.from(row, (_, t) => (t === 0 ? 0 : -1))),
    metrics: {},
  }),
};

function assertSame(a: HostParams, b: HostParams): void {
  assert.deepEqual([...a.keys()].sort(), [...b.keys()].sort());
  for (const [name, tensor] of a) assert.deepEqual(tensor.data, b.get(name)!.data, name);
}

async function trained(options: { dropout?: number; steps?: number; micro?: boolean } = {}): Promise<TransformerModel> {
  const model = await TransformerModel.create(tiny, {
    seed: 3,
    lora: { ...tinyLoraConfig, dropout: options.dropout ?? 0 },
  });
  if (options.micro) model.trainTokenBudget = 64;
  for (let step = 0; step < (options.steps ?? 3); step++)
    await model.trainStep(sequences(step, 8), nll, { learningRate: 0.05 });
  return model;
}

test('LoRA: the base weights stay bit for bit, every adapter moves, and the loss falls', async () => {
  const model = await TransformerModel.create(tiny, { seed: 3, lora: tinyLoraConfig });
  const plain = await TransformerModel.create(tiny, { seed: 3 });
  const base = await model.baseParams();
  assertSame(base, await plain.hostParams());
  const before = await model.adapterParams();
  // B starts at zero: the adapted model is the base model.
  for (const [name, tensor] of before) if (name.endsWith('.loraB')) assert.ok(tensor.data.every((x) => x === 0));
  const batch = sequences(0, 8);
  const batchNll = async () =>
    -(await model.score(batch)).logprobs.reduce((sum, row) => sum + row.reduce((a, b) => a + b, 0), 0);
  const first = await batchNll();
  for (let step = 0; step < 6; step++) await model.trainStep(batch, nll, { learningRate: 0.05 });
  const last = await batchNll();
  assert.ok(last < first, `NLL ${last} < ${first}`);
  assertSame(await model.baseParams(), base);
  const after = await model.adapterParams();
  assert.equal(after.size, 2 * 7 * 2);
  for (const [name, tensor] of after) assert.notDeepEqual(tensor.data, before.get(name)!.data, `${name} moved`);
});

test("LoRA: the optimizer state holds the adapters' moments only", async () => {
  const model = await trained({ steps: 1 });
  const state = await model.optimizerState();
  const adapters = await model.adapterParams();
  assert.deepEqual([...state.m.keys()], [...adapters.keys()]);
  assert.deepEqual([...state.v.keys()], [...adapters.keys()]);
  for (const [name, tensor] of state.m) assert.deepEqual(tensor.shape, adapters.get(name)!.shape);
});

test('LoRA: merged weights (W + α/r·A B) give the unmerged forward to 1e-5', async () => {
  const model = await trained({ steps: 3 });
  const merged = await TransformerModel.fromParams(model.config, await model.hostParams());
  const batch = sequences(9, 5);
  const adapted = await model.score(batch, { entropies: true });
  const folded = await merged.score(batch, { entropies: true });
  let largest = 0;
  adapted.logprobs.forEach((row, i) => {
    row.forEach((x, t) => {
      largest = Math.max(largest, Math.abs(x - at(at(folded.logprobs, i), t)));
    });
  });
  assert.ok(largest <= 1e-5, `max |Δ logprob| ${largest}`);
  // The adapters changed the model: the base alone scores differently.
  const base = await TransformerModel.fromParams(model.config, await model.baseParams());
  const plain = await base.score(batch);
  assert.ok(Math.abs(at(at(plain.logprobs, 0), 1) - at(at(adapted.logprobs, 0), 1)) > 1e-4);
});

test("LoRA: generation reads the adapters (sampled log-probs and tokens as the merged model's)", async () => {
  const model = await trained({ steps: 3 });
  const merged = await TransformerModel.fromParams(model.config, await model.hostParams());
  const prompts = sequences(12, 3).map((row) => row.slice(0, 4));
  const adapted = await generate(model, prompts, { maxNewTokens: 8, temperature: 1, seed: 4 });
  const folded = await generate(merged, prompts, { maxNewTokens: 8, temperature: 1, seed: 4 });
  adapted.forEach((row, i) => {
    assert.deepEqual(row.tokens, at(folded, i).tokens);
    row.logprobs.forEach((x, t) => {
      assert.ok(Math.abs(x - at(at(folded, i).logprobs, t)) <= 1e-5);
    });
  });
});

test('LoRA: micro-batched accumulation equals one micro-batch', async () => {
  const whole = await trained({ steps: 2 });
  const split = await trained({ steps: 2, micro: true });
  const a = await whole.adapterParams();
  const b = await split.adapterParams();
  let largest = 0;
  for (const [name, tensor] of a)
    tensor.data.forEach((x, i) => {
      largest = Math.max(largest, Math.abs(x - at(b.get(name)!.data, i)));
    });
  assert.ok(largest < 1e-5, `max |Δ adapter| ${largest}`);
});

test('LoRA dropout: training draws masks (another result than without), scoring does not', async () => {
  const withDropout = await trained({ dropout: 0.5, steps: 1 });
  const without = await trained({ dropout: 0, steps: 1 });
  const a = await withDropout.adapterParams();
  const b = await without.adapterParams();
  assert.notDeepEqual(a.get('layers.0.wq.loraB')!.data, b.get('layers.0.wq.loraB')!.data);
  const batch = sequences(4, 3);
  assert.deepEqual((await withDropout.score(batch)).logprobs, (await withDropout.score(batch)).logprobs);
});

test("saveAdapter writes PEFT's layout: config fields, keys and shapes (lora_A [r, in], lora_B [out, r])", async () => {
  const model = await trained({ steps: 1 });
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-lora-'));
  try {
    await model.saveAdapter(folder, { baseModelNameOrPath: 'base-folder' });
    const config = JSON.parse(await readFile(join(folder, 'adapter_config.json'), 'utf8'));
    assert.equal(config.peft_type, 'LORA');
    assert.equal(config.task_type, 'CAUSAL_LM');
    assert.equal(config.r, 4);
    assert.equal(config.lora_alpha, 8);
    assert.equal(config.lora_dropout, 0);
    assert.equal(config.base_model_name_or_path, 'base-folder');
    assert.deepEqual(config.target_modules, [
      'q_proj',
      'k_proj',
      'v_proj',
      'o_proj',
      'gate_proj',
      'up_proj',
      'down_proj',
    ]);
    const { tensors } = await readSafetensors(join(folder, 'adapter_model.safetensors'));
    assert.equal(tensors.size, 28);
    const shape = (key: string) => tensors.get(`base_model.model.model.layers.1.${key}.weight`)?.shape;
    // hidden 16, 4 heads of 4, 2 KV heads (8 wide), MLP 32.
    assert.deepEqual(shape('self_attn.q_proj.lora_A'), [4, 16]);
    assert.deepEqual(shape('self_attn.q_proj.lora_B'), [16, 4]);
    assert.deepEqual(shape('self_attn.k_proj.lora_B'), [8, 4]);
    assert.deepEqual(shape('self_attn.o_proj.lora_A'), [4, 16]);
    assert.deepEqual(shape('mlp.gate_proj.lora_B'), [32, 4]);
    assert.deepEqual(shape('mlp.down_proj.lora_A'), [4, 32]);
    assertSame(await loadAdapterTensors(folder), await model.adapterParams());
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
