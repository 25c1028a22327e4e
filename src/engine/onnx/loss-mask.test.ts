import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at, entry } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { rlLoss, sftLoss } from '../../algorithms/rl-loss.ts';
import { modelConfigSchema, type HostParams } from '../../model/config.ts';
import { initHostParams } from '../../model/params.ts';
import { initLoraParams, loraConfigSchema } from '../../model/lora.ts';
import { OnnxTrainer, type OnnxTrainerInput } from './onnx-trainer.ts';
import { trainingRuns } from './train-runs.ts';
import { tinyLoraConfig, tinyModelConfig } from '../tiny-model-fixture.ts';

const config = modelConfigSchema.parse({ ...tinyModelConfig, maxSeqLen: 32, valueHead: true, initStd: 0.3 });
const lora = loraConfigSchema.parse(tinyLoraConfig);

function randomised(params: HostParams, seed: number): HostParams {
  const rng = new Rng(seed);
  return new Map(
    [...params].map(([name, t]) => [
      name,
      { shape: t.shape, data: Float32Array.from(t.data, (x) => x + (2 * rng.next() - 1) * 0.3) },
    ]),
  );
}

function trainer(options: OnnxTrainerInput['options'] = {}): OnnxTrainer {
  const params = randomised(initHostParams(config, 1), 2);
  const adapters = randomised(initLoraParams(config, lora, 3), 4);
  return OnnxTrainer.create({ config, params, lora, adapters, options: { threads: 1, ...options } });
}

const rng = new Rng(80);
const batch = Array.from({ length: 6 }, () => Array.from({ length: rng.range(6, 14) }, () => rng.int(40)));
// An episode's shape: a prompt, then policy tokens with an env token between; sequence 2 has none.
const lossMask = batch.map((row, i) =>
  Float64Array.from(row, (_, t) => (i !== 2 && t >= row.length / 2 && t % 3 !== 0 ? 1 : 0)),
);

test('with a loss mask the heads run at its positions only: the same log-probs, entropies and values there, 0 elsewhere', async () => {
  const t = trainer();
  const full = await t.score(batch, { entropies: true });
  const masked = await t.score(batch, { entropies: true, lossMask });
  for (const key of ['logprobs', 'entropies', 'values'] as const) {
    batch.forEach((row, i) => {
      row.forEach((_, p) => {
        const got = at(at(masked[key] ?? [], i), p);
        if (at(at(lossMask, i), p) === 0) assert.equal(got, 0, `${key}[${i}][${p}]`);
        else assert.ok(Math.abs(got - at(at(full[key] ?? [], i), p)) <= 1e-6, `${key}[${i}][${p}]`);
      });
    });
  }
  const runs = [...trainingRuns(batch, config, {}, lossMask)];
  assert.ok(
    runs.every((run) => !run.indices.includes(2)),
    'the sequence without masked tokens is not run',
  );
  assert.equal(
    runs.reduce((n, run) => n + run.slots.length, 0),
    lossMask.reduce((n, row) => n + row.reduce((m, x) => m + x, 0), 0),
  );
  await t.release();
});

test('a PPO step with its loss mask equals the step with heads at every position (one run or split, kept or recomputed)', async () => {
  const advantages = batch.map((row) => Float64Array.from(row, () => rng.next() - 0.5));
  const reference = trainer();
  const old = (await reference.score(batch)).logprobs.map((row) => row.map((x) => x + (rng.next() - 0.5) * 0.4));
  const everywhere = await reference.trainStep(batch, rlLoss({ oldLogprobs: old, advantages, lossMask }), {
    learningRate: 0.01,
  });
  const loss = { ...rlLoss({ oldLogprobs: old, advantages, lossMask }), lossMask };
  for (const options of [{}, { trainTokenBudget: 24 }, { trainTokenBudget: 24, keptActivationBudget: 0 }]) {
    const t = trainer(options);
    const report = await t.trainStep(batch, loss, { learningRate: 0.01 });
    assert.ok(Math.abs(report.loss - everywhere.loss) <= 1e-6 * Math.max(1, Math.abs(everywhere.loss)));
    assert.ok(Math.abs(report.gradNorm - everywhere.gradNorm) <= 1e-5 * everywhere.gradNorm);
    assert.equal(report.tokens, everywhere.tokens);
    for (const [name, tensor] of reference.adapterParams()) {
      const other = entry(Object.fromEntries(t.adapterParams()), name).data;
      tensor.data.forEach((x, i) => {
        assert.ok(Math.abs(x - at(other, i)) <= 1e-6, `${JSON.stringify(options)}: ${name}[${i}]`);
      });
    }
    await t.release();
  }
  await reference.release();
});

test('a loss mask of another shape is refused by row; an all-zero mask runs nothing and adds a zero gradient', async () => {
  const t = trainer();
  await assert.rejects(t.score(batch, { lossMask: lossMask.slice(1) }), /lossMask has 5 rows for 6 sequences/);
  const short = lossMask.map((row, i) => (i === 3 ? row.subarray(1) : row));
  await assert.rejects(t.score(batch, { lossMask: short }), /lossMask row 3 has \d+ positions for a sequence of/);
  const zeros = batch.map((row) => new Float64Array(row.length));
  const report = await t.forwardBackward(batch, { ...sftLoss(zeros), lossMask: zeros });
  assert.equal(report.tokens, 0);
  for (const tensor of t.accumulatedGradients().values()) assert.ok(tensor.data.every((x) => x === 0));
  await t.release();
});
