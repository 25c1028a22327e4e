import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { TokenLoss } from '../core/loss.ts';
import { sftLoss } from '../algorithms/rl-loss.ts';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import type { HostParams } from '../model/config.ts';
import { generate } from './generate.ts';
import { TransformerModel } from './transformer-model.ts';
import { tinyModelConfig, tinyLoraConfig } from './tiny-model-fixture.ts';

function sequences(seed: number, count: number, min = 5, max = 20): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(min, max) }, () => rng.int(40)));
}

const masked = (batch: number[][]) => batch.map((row) => Float64Array.from(row, (_, t) => (t >= 1 ? 1 : 0)));

function changed(before: HostParams, after: HostParams): string[] {
  return [...before].filter(([name, t]) => after.get(name)?.data.some((x, i) => x !== t.data[i])).map(([name]) => name);
}

test('score: per-sequence rows aligned to tokens (index 0 is 0), entropies and values on request / with a value head', async () => {
  const model = await TransformerModel.create({ ...tinyModelConfig, valueHead: true }, { seed: 1 });
  const batch = sequences(2, 3);
  const out = await model.score(batch, { entropies: true, temperature: 0.7 });
  assert.deepEqual(
    out.logprobs.map((r) => r.length),
    batch.map((s) => s.length),
  );
  assert.deepEqual(
    out.entropies?.map((r) => r.length),
    batch.map((s) => s.length),
  );
  assert.equal(out.values?.length, 3);
  for (const row of out.logprobs) {
    assert.equal(row[0], 0);
    assert.ok(row.slice(1).every((x) => x < 0 && Number.isFinite(x)));
  }
  assert.equal((await model.score(batch)).entropies, undefined);
  await model.release();
});

test('trainStep lowers an SFT loss; its loss and metrics.nll are the NLL; forwardBackward + optimStep is the same step', async () => {
  const batch = sequences(3, 4);
  const model = await TransformerModel.create(tinyModelConfig, { seed: 2 });
  const twin = await TransformerModel.create(tinyModelConfig, { seed: 2 });
  const first = await model.trainStep(batch, sftLoss(masked(batch)), { learningRate: 1e-2 });
  await twin.forwardBackward(batch, sftLoss(masked(batch)));
  await twin.optimStep({ learningRate: 1e-2 });
  const nll = first.metrics.nll ?? 0;
  assert.ok(first.loss > 3 && Math.abs(nll - first.loss) < 1e-5 * nll, `loss ${first.loss}, nll ${nll}`);
  assert.equal(model.step, 1);
  assert.deepEqual(changed(await model.hostParams(), await twin.hostParams()), []);
  let last = first.loss;
  for (let step = 0; step < 5; step++)
    last = (await model.trainStep(batch, sftLoss(masked(batch)), { learningRate: 1e-2 })).loss;
  assert.ok(last < first.loss - 0.1, `${first.loss} → ${last}`);
  await model.release();
  await twin.release();
});

test('micro-batched training and scoring equal one big batch (gradients, scores, loss)', async () => {
  const batch = sequences(21, 9, 5, 30);
  const whole = await TransformerModel.create(tinyModelConfig, { seed: 2 });
  const split = await TransformerModel.create(tinyModelConfig, { seed: 2 });
  split.trainTokenBudget = 64;
  split.scoreTokenBudget = 96;
  assert.throws(() => {
    split.trainTokenBudget = 0;
  }, /positive integer/);
  const a = await whole.forwardBackward(batch, sftLoss(masked(batch)));
  const b = await split.forwardBackward(batch, sftLoss(masked(batch)));
  assert.ok(Math.abs(a.loss - b.loss) < 1e-5);
  const ga = await whole.accumulatedGradients();
  const gb = await split.accumulatedGradients();
  for (const [name, tensor] of ga) {
    const other = gb.get(name)?.data ?? new Float32Array();
    tensor.data.forEach((x, i) => {
      assert.ok(Math.abs(x - at(other, i)) < 1e-6 + 1e-4 * Math.abs(x), `${name}[${i}]`);
    });
  }
  whole.zeroGradients();
  await assert.rejects(whole.accumulatedGradients(), /no accumulated gradients/);
  const sa = await whole.score(batch);
  const sb = await split.score(batch);
  sa.logprobs.forEach((row, i) => {
    row.forEach((x, t) => {
      assert.ok(Math.abs(x - at(at(sb.logprobs, i), t)) < 1e-5);
    });
  });
  await whole.release();
  await split.release();
});

test('checkpoint round trip is bit-exact, and training continues identically from it (optimizer state round trip)', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-engine-ckpt-'));
  try {
    const config = { ...tinyModelConfig, vocabSize: 272, valueHead: true, attentionBias: true };
    const model = await TransformerModel.create(config, { seed: 8 });
    const batch = sequences(1, 4, 8, 16);
    await model.trainStep(batch, sftLoss(masked(batch)), { learningRate: 1e-2 });
    const params = await model.hostParams();
    await saveCheckpoint(dir, { config: model.config, params, extra: { step: model.step } });
    const loaded = await loadCheckpoint(dir);
    assert.deepEqual(changed(params, loaded.params), []);
    const restored = await TransformerModel.fromParams(loaded.config, loaded.params);
    restored.loadOptimizerState(await model.optimizerState());
    assert.equal(restored.step, 1);
    const next = await model.trainStep(batch, sftLoss(masked(batch)), { learningRate: 1e-2 });
    const again = await restored.trainStep(batch, sftLoss(masked(batch)), { learningRate: 1e-2 });
    assert.equal(again.loss, next.loss);
    assert.deepEqual(changed(await model.hostParams(), await restored.hostParams()), []);
    assert.throws(() => restored.loadOptimizerState({ step: 1, m: new Map(), v: new Map() }), /missing/);
    await model.release();
    await restored.release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('detachValueHead: a value-only loss trains the value head alone; shared, it also moves the trunk', async () => {
  const batch = sequences(11, 4, 5, 12);
  const weights = batch.map((s) => Float32Array.from(s, (_, t) => (t === 0 ? 0 : 1)));
  const valueLoss = (detach: boolean): TokenLoss => ({
    name: 'value-only',
    dependsOnCurrent: true,
    detachValueHead: detach,
    compute: (input) => ({
      loss: (input.values ?? []).reduce((n, v) => n + v.reduce((m, x) => m + x, 0), 0),
      gradLogprobs: batch.map((s) => new Float32Array(s.length)),
      gradValues: weights,
      metrics: {},
    }),
  });
  for (const detach of [true, false]) {
    const model = await TransformerModel.create({ ...tinyModelConfig, valueHead: true }, { seed: 12 });
    // The value head starts at zero, so the first step cannot reach the trunk either way; the second can.
    await model.trainStep(batch, valueLoss(detach), { learningRate: 1e-2 });
    const before = await model.hostParams();
    await model.trainStep(batch, valueLoss(detach), { learningRate: 1e-2 });
    const moved = changed(before, await model.hostParams());
    assert.ok(moved.includes('valueHead.w') && moved.includes('valueHead.b'), `${detach}: the value head moves`);
    const trunk = moved.filter((name) => !name.startsWith('valueHead'));
    if (detach) assert.deepEqual(trunk, [], 'detached: nothing but the value head moves');
    else assert.ok(trunk.length > 5, `shared: the trunk moves too (${trunk.length} tensors)`);
    await model.release();
  }
  const plain = await TransformerModel.create(tinyModelConfig, { seed: 1 });
  await assert.rejects(plain.forwardBackward(batch, valueLoss(false)), /value head/);
  await plain.release();
});

test('generation: sampled log-probs equal scoring, before and after a full fine-tuning step (the session follows the weights)', async () => {
  const model = await TransformerModel.create({ ...tinyModelConfig, valueHead: true }, { seed: 1 });
  const prompts = sequences(2, 5, 3, 12);
  for (const round of [0, 1]) {
    if (round === 1) await model.trainStep(prompts, sftLoss(masked(prompts)), { learningRate: 5e-2 });
    const rows = await generate(model, prompts, { maxNewTokens: 16, temperature: 0.7, seed: 9 });
    const scored = await model.score(
      prompts.map((p, b) => [...p, ...at(rows, b).tokens]),
      { temperature: 0.7 },
    );
    rows.forEach((row, b) => {
      assert.equal(row.tokens.length, 16);
      row.logprobs.forEach((lp, i) => {
        const reference = at(at(scored.logprobs, b), at(prompts, b).length + i);
        assert.ok(Math.abs(lp - reference) < 1e-4, `round ${round} row ${b} token ${i}: ${lp} vs ${reference}`);
      });
    });
  }
  assert.deepEqual(await generate(model, [], { maxNewTokens: 4 }), []);
  await model.release();
});

test('generation: greedy is deterministic, seeds reproduce, stop tokens end a row', async () => {
  const model = await TransformerModel.create(tinyModelConfig, { seed: 4 });
  const prompts = [
    [1, 2, 3],
    [4, 5, 6, 7, 8],
  ];
  const greedy = await generate(model, prompts, { maxNewTokens: 12, temperature: 0 });
  assert.deepEqual(await generate(model, prompts, { maxNewTokens: 12, temperature: 0 }), greedy);
  const sampled = await generate(model, prompts, { maxNewTokens: 12, temperature: 1, seed: 5 });
  assert.deepEqual(await generate(model, prompts, { maxNewTokens: 12, temperature: 1, seed: 5 }), sampled);
  const stop = at(at(sampled, 0).tokens, 3);
  const stopped = await generate(model, prompts, { maxNewTokens: 12, temperature: 1, seed: 5, stopTokens: [stop] });
  assert.equal(at(stopped, 0).finishReason, 'stop');
  assert.equal(at(stopped, 0).tokens.at(-1), stop);
  await model.release();
});

test('LoRA: base weights stay bit for bit, every adapter moves, the optimizer state holds the adapters only, generation follows the adapters', async () => {
  const model = await TransformerModel.create(tinyModelConfig, { seed: 3, lora: { ...tinyLoraConfig, dropout: 0.1 } });
  const base = await model.baseParams();
  const adapters = await model.adapterParams();
  const batch = sequences(5, 4);
  const before = await generate(model, batch, { maxNewTokens: 8, temperature: 0 });
  for (let step = 0; step < 3; step++) await model.trainStep(batch, sftLoss(masked(batch)), { learningRate: 5e-2 });
  assert.deepEqual(changed(base, await model.baseParams()), []);
  assert.equal(changed(adapters, await model.adapterParams()).length, adapters.size);
  const state = await model.optimizerState();
  assert.deepEqual([...state.m.keys()], [...adapters.keys()]);
  assert.equal(state.step, 3);
  // Merged weights score as the adapted model (no dropout at scoring).
  const merged = await TransformerModel.fromParams(tinyModelConfig, await model.hostParams());
  const [a, b] = [await model.score(batch), await merged.score(batch)];
  a.logprobs.forEach((row, i) => {
    row.forEach((x, t) => {
      assert.ok(Math.abs(x - at(at(b.logprobs, i), t)) < 1e-5);
    });
  });
  const after = await generate(model, batch, { maxNewTokens: 8, temperature: 0 });
  const mergedRows = await generate(merged, batch, { maxNewTokens: 8, temperature: 0 });
  after.forEach((row, i) => {
    assert.deepEqual(row.tokens, at(mergedRows, i).tokens);
    row.logprobs.forEach((x, t) => {
      assert.ok(Math.abs(x - at(at(mergedRows, i).logprobs, t)) < 1e-5);
    });
  });
  assert.notDeepEqual(
    after.map((row) => row.logprobs),
    before.map((row) => row.logprobs),
  );
  await model.release();
  await merged.release();
});

test("saveAdapter writes PEFT's layout; a model without LoRA refuses adapter calls by name", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-engine-adapter-'));
  try {
    const model = await TransformerModel.create(tinyModelConfig, { seed: 3, lora: tinyLoraConfig });
    await model.saveAdapter(dir, { baseModelNameOrPath: 'tiny' });
    const config = JSON.parse(await readFile(join(dir, 'adapter_config.json'), 'utf8'));
    assert.equal(config.r, 4);
    assert.equal(config.lora_alpha, 8);
    await model.release();
    const plain = await TransformerModel.create(tinyModelConfig, { seed: 3 });
    await assert.rejects(plain.adapterParams(), /no LoRA adapters/);
    await assert.rejects(plain.saveAdapter(dir), /no LoRA adapters/);
    assert.throws(() => plain.setAdapters(new Map()), /no LoRA adapters/);
    await plain.release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('hostile input: token ids outside [0, vocab), fractional ids and a NaN learning rate are refused by name, weights untouched', async () => {
  const model = await TransformerModel.create(tinyModelConfig, { seed: 1 });
  for (const bad of [
    [1, 40],
    [1, -1],
    [1, 2.5],
  ])
    await assert.rejects(
      model.score([[2, 3], bad]),
      /sequence 1, token 1: id .* is not a token id of this model \(integers 0 … 39\)/,
    );
  await assert.rejects(model.score([Array.from({ length: 65 }, () => 1)]), /context window of 64/);
  assert.deepEqual((await model.score([])).logprobs, []);
  const before = await model.hostParams();
  const batch = [[1, 2, 3]];
  await assert.rejects(model.trainStep(batch, sftLoss(masked(batch)), { learningRate: Number.NaN }), /learningRate/);
  await assert.rejects(model.score(batch, { temperature: 0 }), /temperature must be > 0/);
  assert.deepEqual(changed(before, await model.hostParams()), []);
  assert.equal(model.step, 0);
  await model.release();
});

test('inferenceSession: kept across calls without options, refreshed in place after a step, remade for other options', async () => {
  const model = await TransformerModel.create(tinyModelConfig, { seed: 3, lora: { rank: 2, alpha: 4 } });
  const first = await model.inferenceSession({ threads: 1 });
  assert.equal(await model.inferenceSession(), first);
  const batch = sequences(6, 2);
  await model.trainStep(batch, sftLoss(masked(batch)), { learningRate: 5e-2 });
  assert.equal(await model.inferenceSession(), first, 'LoRA: new adapters, same session');
  const other = await model.inferenceSession({ threads: 2 });
  assert.notEqual(other, first);
  assert.equal(await model.inferenceSession({ threads: 2 }), other);
  await model.release();
});
