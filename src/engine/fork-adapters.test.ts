import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Rng } from '../core/rng.ts';
import { sftLoss } from '../algorithms/rl-loss.ts';
import type { HostParams } from '../model/config.ts';
import { generate } from './generate.ts';
import { sessionsMadeBy } from './onnx/sessions-made-by.ts';
import { TransformerModel } from './transformer-model.ts';
import { tinyModelConfig, tinyLoraConfig } from './tiny-model-fixture.ts';

const lora = { ...tinyLoraConfig, dropout: 0.1 };

function sequences(seed: number, count: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(5, 14) }, () => rng.int(40)));
}

const masked = (batch: number[][]) => batch.map((row) => Float64Array.from(row, (_, t) => (t >= 1 ? 1 : 0)));

/** Everything a model's outputs depend on: scored log-probs (the trainer's path) and sampled rows (the generation session's). */
async function outputs(model: TransformerModel, batch: number[][]) {
  const scored = (await model.score(batch)).logprobs.map((row) => [...row]);
  const sampled = await generate(model, batch, { maxNewTokens: 6, temperature: 0.9, seed: 5 });
  return { scored, sampled: sampled.map((row) => ({ tokens: row.tokens, logprobs: row.logprobs })) };
}

function sameArrays(a: HostParams, b: HostParams): boolean {
  return [...a].every(([name, t]) => b.get(name)?.data.every((x, i) => x === t.data[i]) === true);
}

test('forkAdapters: training one fork leaves the parent and the other fork bit-identical, and the base untouched', async () => {
  const parent = await TransformerModel.create(tinyModelConfig, { seed: 3, lora });
  const batch = sequences(5, 4);
  await parent.trainStep(batch, sftLoss(masked(batch)), { learningRate: 5e-2 }); // adapters away from B = 0
  const [trained, other] = [await parent.forkAdapters({ seed: 1 }), await parent.forkAdapters({ seed: 2 })];
  const base = await parent.baseParams();
  const before = { parent: await outputs(parent, batch), other: await outputs(other, batch) };
  const trainedBefore = await outputs(trained, batch);
  for (let step = 0; step < 3; step++) await trained.trainStep(batch, sftLoss(masked(batch)), { learningRate: 5e-2 });
  assert.deepEqual(await outputs(parent, batch), before.parent);
  assert.deepEqual(await outputs(other, batch), before.other);
  assert.notDeepEqual((await outputs(trained, batch)).scored, trainedBefore.scored);
  assert.ok(sameArrays(base, await trained.baseParams()) && sameArrays(base, await parent.baseParams()));
  assert.equal(trained.step, 3);
  assert.equal(other.step, 0);
  assert.equal(parent.step, 1);
  for (const model of [parent, trained, other]) await model.release();
});

test("forkAdapters: a fork with the parent's adapters scores and generates as the parent; forks generate on the parent's session", async () => {
  const parent = await TransformerModel.create(tinyModelConfig, { seed: 4, lora });
  const batch = sequences(6, 3);
  await parent.trainStep(batch, sftLoss(masked(batch)), { learningRate: 5e-2 });
  const copy = await parent.forkAdapters({ adapters: await parent.adapterParams() });
  const fresh = await parent.forkAdapters({ seed: 9 });
  const first = await sessionsMadeBy(() => generate(parent, batch, { maxNewTokens: 4, temperature: 0 }));
  assert.equal(first.sessions.length, 1, 'the first generation makes the base session');
  const forked = await sessionsMadeBy(async () => {
    await generate(fresh, batch, { maxNewTokens: 4, temperature: 0 });
    return generate(copy, batch, { maxNewTokens: 4, temperature: 0 });
  });
  assert.equal(forked.sessions.length, 0, 'forks make no generation session of their own');
  assert.deepEqual(forked.result, first.result);
  assert.deepEqual((await copy.score(batch)).logprobs, (await parent.score(batch)).logprobs);

  // release: the shared session stays while a fork uses it, and goes with the last user.
  const [session] = first.sessions;
  await parent.release();
  assert.equal(session?.live, true);
  assert.deepEqual(await generate(copy, batch, { maxNewTokens: 4, temperature: 0 }), first.result);
  await copy.release();
  assert.equal(session?.live, true);
  await fresh.release();
  assert.equal(session?.live, false);
});

test('forkAdapters refuses a full fine-tuning model and adapters of the wrong shape; a forked base refuses setParams', async () => {
  const full = await TransformerModel.create(tinyModelConfig, { seed: 1 });
  await assert.rejects(full.forkAdapters(), /only a LoRA model/);
  const parent = await TransformerModel.create(tinyModelConfig, { seed: 1, lora });
  const wrong = await (await TransformerModel.create(tinyModelConfig, { seed: 1, lora: { rank: 2 } })).adapterParams();
  await assert.rejects(parent.forkAdapters({ adapters: wrong }), /forkAdapters adapters/);
  const fork = await parent.forkAdapters();
  assert.throws(() => parent.setParams(new Map()), /missing|expected|params/i);
  await assert.rejects(async () => parent.setParams(await full.hostParams()), /shared with forked adapters/);
  await assert.rejects(async () => fork.setParams(await full.hostParams()), /shared with forked adapters/);
});

test('forkAdapters: forks with the same generation options share one session; other options make their own', async () => {
  const parent = await TransformerModel.create(tinyModelConfig, { seed: 2, lora });
  const fork = await parent.forkAdapters({ seed: 3 });
  const made = await sessionsMadeBy(async () => {
    const a = await parent.inferenceSession({ threads: 1 });
    const b = await fork.inferenceSession({ threads: 1 });
    const c = await fork.inferenceSession({ threads: 2 });
    return [a, b, c];
  });
  assert.equal(made.sessions.length, 2, 'one per set of options');
  assert.notEqual(made.result[0], made.result[1], 'each model its own inference (its own adapters)');
  await parent.release();
  await fork.release();
  assert.ok(made.sessions.every((session) => !session.live));
});
