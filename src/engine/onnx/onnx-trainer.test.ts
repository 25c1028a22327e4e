import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at, entry } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { rlLoss, sftLoss } from '../../algorithms/rl-loss.ts';
import type { TokenLoss } from '../../core/loss.ts';
import { modelConfigSchema, type HostParams, type ModelConfigInput } from '../../model/config.ts';
import { initHostParams } from '../../model/params.ts';
import { initLoraParams, loraConfigSchema } from '../../model/lora.ts';
import { dropoutFeeds } from './dropout-feeds.ts';
import { buildModelGraph } from './model-graph.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession } from './session.ts';
import { copyParams } from './host-params.ts';
import { OnnxTrainer } from './onnx-trainer.ts';
import { keepsActivations, runFeeds, trainingRuns } from './train-runs.ts';
import { activationBytes } from '../../model/micro-batches.ts';

/** Every family feature the graph has: Qwen2 biases, Qwen3 q/k norms, GQA, a value head, tied head. */
const tiny: ModelConfigInput = {
  vocabSize: 40,
  hiddenSize: 16,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 24,
  maxSeqLen: 32,
  attentionBias: true,
  qkNorm: true,
  valueHead: true,
  initStd: 0.3,
};
const config = modelConfigSchema.parse(tiny);

function sequences(seed: number, count: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(4, 12) }, () => rng.int(40)));
}

/** Every tensor random (biases, norms, value head too), so each gradient is non-trivial. */
function randomised(params: HostParams, seed: number, scale = 0.3): HostParams {
  const rng = new Rng(seed);
  return new Map(
    [...params].map(([name, t]) => [
      name,
      { shape: t.shape, data: Float32Array.from(t.data, (x) => x + (2 * rng.next() - 1) * scale) },
    ]),
  );
}

/** A loss linear in the heads (dependsOnCurrent: false): Σ w·logπ + Σ e·H + Σ u·V, seeded weights. */
function linearLoss(batch: number[][], seed: number, heads = true): TokenLoss {
  const rng = new Rng(seed);
  const draw = () => batch.map((row) => Float32Array.from(row, (_, t) => (t === 0 ? 0 : rng.next() - 0.5)));
  const [w, e, u] = [draw(), draw(), draw()];
  const dot = (a: Float32Array[], b: Float32Array[] | undefined) =>
    b === undefined ? 0 : a.reduce((s, row, i) => s + row.reduce((r, x, t) => r + x * at(at(b, i), t), 0), 0);
  return {
    name: 'linear',
    dependsOnCurrent: false,
    compute: ({ logprobs, entropies, values }) => ({
      loss: dot(w, logprobs) + dot(e, entropies) + dot(u, values),
      gradLogprobs: w,
      ...(heads ? { gradEntropies: e, gradValues: u } : {}),
      metrics: {},
    }),
  };
}

/** F = Σ w·logπ + Σ e·H + Σ u·V at the trainer's current arrays, from its scoring session. */
async function linearValue(trainer: OnnxTrainer, batch: number[][], loss: TokenLoss): Promise<number> {
  const scored = await trainer.score(batch, { entropies: true });
  return loss.compute(scored).loss;
}

/** A seeded sample of element indices per tensor (first, last and a few between). */
function sampleIndices(size: number, rng: Rng, count = 3): number[] {
  return [...new Set([0, size - 1, ...Array.from({ length: count }, () => rng.int(size))])];
}

test('full fine-tuning: every weight’s gradient (embedding, tied head, biases, q/k norms, value head) matches central differences through onnxruntime', async () => {
  const params = randomised(initHostParams(config, 1), 2);
  const trainer = OnnxTrainer.create({ config, params, options: { threads: 1 } });
  const batch = sequences(3, 3);
  const loss = linearLoss(batch, 4);
  await trainer.forwardBackward(batch, loss);
  const gradients = trainer.accumulatedGradients();
  const rng = new Rng(5);
  const step = 1e-2;
  for (const [name, tensor] of trainer.weightsView()) {
    const gradient = entry(Object.fromEntries(gradients), name).data;
    for (const i of sampleIndices(tensor.data.length, rng)) {
      const saved = at(tensor.data, i);
      tensor.data[i] = saved + step;
      const plus = await linearValue(trainer, batch, loss);
      tensor.data[i] = saved - step;
      const minus = await linearValue(trainer, batch, loss);
      tensor.data[i] = saved;
      const numeric = (plus - minus) / (2 * step);
      const analytic = at(gradient, i);
      assert.ok(
        Math.abs(numeric - analytic) <= 3e-3 + 3e-2 * Math.abs(analytic),
        `∂${name}[${i}]: analytic ${analytic} vs numeric ${numeric}`,
      );
    }
  }
  await trainer.release();
});

test('LoRA with dropout: the adapters’ gradient under the seeded masks matches central differences of the masked forward', async () => {
  const lora = loraConfigSchema.parse({ rank: 2, alpha: 4, dropout: 0.4 });
  const params = randomised(initHostParams(config, 6), 7);
  const adapters = randomised(initLoraParams(config, lora, 8), 9);
  const trainer = OnnxTrainer.create({ config, params, lora, adapters, dropoutSeed: 11, options: { threads: 1 } });
  const batch = sequences(10, 3);
  const loss = linearLoss(batch, 12, false);
  await trainer.forwardBackward(batch, loss);
  const gradients = trainer.accumulatedGradients();
  // The same masks the trainer drew for its one micro-batch (a fresh Rng of its seed), fed to the plain forward graph.
  const [run] = [...trainingRuns(batch, config, {})];
  if (run === undefined) throw new RangeError('no run');
  const masks = dropoutFeeds(config, lora, run.packed.rows, run.packed.length, new Rng(11));
  const session = await OnnxSession.create(
    serializeModel(buildModelGraph({ config, params, lora, dropout: true, cache: false })),
    {
      threads: 1,
    },
  );
  const value = async () => {
    const out = await session.run({ ...runFeeds(run, 1, config, [adapters]), ...masks }, ['target_logprobs']);
    const logprobs = entry(out, 'target_logprobs').data as Float32Array;
    const grad = loss.compute({ logprobs: batch.map((s) => new Float32Array(s.length)) }).gradLogprobs;
    return run.slots.reduce((s, [row, t], k) => s + at(at(grad, at(run.indices, row)), t) * at(logprobs, k), 0);
  };
  const rng = new Rng(13);
  let checked = 0;
  for (const [name, tensor] of adapters) {
    const gradient = entry(Object.fromEntries(gradients), name).data;
    for (const i of sampleIndices(tensor.data.length, rng, 1)) {
      const saved = at(tensor.data, i);
      tensor.data[i] = saved + 1e-2;
      const plus = await value();
      tensor.data[i] = saved - 1e-2;
      const minus = await value();
      tensor.data[i] = saved;
      const numeric = (plus - minus) / 2e-2;
      assert.ok(
        Math.abs(numeric - at(gradient, i)) <= 2e-3 + 3e-2 * Math.abs(at(gradient, i)),
        `∂${name}[${i}]: analytic ${at(gradient, i)} vs numeric ${numeric}`,
      );
      checked++;
    }
  }
  assert.ok(checked > 50);
  await session.release();
  await trainer.release();
});

test('LoRA dropout replays under its seed, differs under another, and changes the step against p = 0', async () => {
  const run = async (dropout: number, seed: number) => {
    const lora = loraConfigSchema.parse({ rank: 2, alpha: 4, dropout });
    const trainer = OnnxTrainer.create({
      config,
      params: initHostParams(config, 1),
      lora,
      adapters: randomised(initLoraParams(config, lora, 2), 3),
      dropoutSeed: seed,
      options: { threads: 1 },
    });
    for (let step = 0; step < 2; step++) {
      const batch = sequences(20 + step, 4);
      await trainer.trainStep(batch, linearLoss(batch, 30 + step, false), { learningRate: 0.01 });
    }
    const adapters = trainer.adapterParams();
    await trainer.release();
    return [...adapters.values()].flatMap((t) => [...t.data]);
  };
  const [a, b, c, none] = [await run(0.3, 1), await run(0.3, 1), await run(0.3, 2), await run(0, 1)];
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  assert.notDeepEqual(a, none);
});

test('LoRA PPO step with a value loss: the value head trains (own AdamW moments), attached or detached; the frozen base stays bit-identical', async () => {
  for (const detachValueHead of [false, true]) {
    const lora = loraConfigSchema.parse({ rank: 2, alpha: 4 });
    const params = randomised(initHostParams(config, 1), 2);
    const base = copyParams(params);
    const adapters = randomised(initLoraParams(config, lora, 3), 4);
    const trainer = OnnxTrainer.create({ config, params, lora, adapters, options: { threads: 1 } });
    const batch = sequences(40, 3);
    const rng = new Rng(41);
    const draw = () => batch.map((row) => Float64Array.from(row, () => rng.next() - 0.5));
    const old = await trainer.score(batch);
    const lossMask = batch.map((row) => Float64Array.from(row, (_, t) => (t > 0 ? 1 : 0)));
    const loss = rlLoss({
      oldLogprobs: old.logprobs,
      oldValues: old.values,
      advantages: draw(),
      returns: draw(),
      lossMask,
      config: { detachValueHead },
    });
    await trainer.trainStep(batch, loss, { learningRate: 0.01 });
    for (const [name, tensor] of trainer.weightsView())
      assert.deepEqual(
        tensor.data,
        entry(Object.fromEntries(base), name).data,
        `${name} stays (detach ${detachValueHead})`,
      );
    const head = trainer.valueHeadParams();
    assert.ok(head !== null);
    for (const [name, tensor] of head) {
      const before = entry(Object.fromEntries(base), name).data;
      assert.notDeepEqual(tensor.data, before, `${name} moves (detach ${detachValueHead})`);
      assert.deepEqual(entry(Object.fromEntries(trainer.mergedParams()), name).data, tensor.data, `merged ${name}`);
    }
    const after = await trainer.score(batch);
    assert.notDeepEqual(after.values, old.values, 'scoring reads the trained value head');
    const moments = trainer.optimizerState().m;
    for (const name of ['valueHead.w', 'valueHead.b'])
      assert.ok(
        entry(Object.fromEntries(moments), name).data.some((x) => x !== 0),
        `${name} has AdamW moments`,
      );
    assert.equal(trainer.adapterParams().has('valueHead.w'), false, 'the adapters stay the adapters alone');
    await trainer.release();
  }
});

test('micro-batches accumulate exactly (sum) and an SFT step reports its NLL (metrics.loss and metrics.nll, not 0)', async () => {
  const params = initHostParams(config, 1);
  const whole = OnnxTrainer.create({ config, params: copyParams(params), options: { threads: 1 } });
  const split = OnnxTrainer.create({
    config,
    params: copyParams(params),
    options: { threads: 1, trainTokenBudget: 24 },
  });
  const batch = sequences(40, 6);
  const mask = batch.map((row) => Float64Array.from(row, (_, t) => (t >= 2 ? 1 : 0)));
  const scored = await whole.score(batch);
  let nll = 0;
  let count = 0;
  scored.logprobs.forEach((row, i) => {
    row.forEach((x, t) => {
      nll -= at(at(mask, i), t) * x;
      count += at(at(mask, i), t);
    });
  });
  nll /= count;
  const report = await whole.trainStep(batch, sftLoss(mask), { learningRate: 0.01 });
  const micro = await split.trainStep(batch, sftLoss(mask), { learningRate: 0.01 });
  assert.ok(Math.abs(report.loss - nll) <= 1e-5 * nll, `loss ${report.loss} vs NLL ${nll}`);
  assert.ok(Math.abs((report.metrics.nll ?? 0) - nll) <= 1e-5 * nll, `metrics.nll ${report.metrics.nll}`);
  assert.ok(Math.abs((report.metrics.loss ?? 0) - nll) <= 1e-5 * nll, `metrics.loss ${report.metrics.loss}`);
  assert.ok(Math.abs(micro.gradNorm - report.gradNorm) <= 1e-5 * report.gradNorm);
  assert.ok(Math.abs(micro.loss - report.loss) <= 1e-5 * report.loss);
  for (const [name, tensor] of whole.weightsView()) {
    const other = entry(Object.fromEntries(split.weightsView()), name).data;
    tensor.data.forEach((x, i) => {
      assert.ok(Math.abs(x - at(other, i)) <= 1e-6, `${name}[${i}]`);
    });
  }
  await whole.release();
  await split.release();
});

test('a LoRA PPO step split into runs equals one run, its scoring activations kept for the backward or recomputed', async () => {
  const lora = loraConfigSchema.parse({ rank: 2, alpha: 4 });
  const params = randomised(initHostParams(config, 1), 5);
  const adapters = randomised(initLoraParams(config, lora, 3), 6);
  const trainer = (options: { trainTokenBudget?: number; keptActivationBudget?: number }) =>
    OnnxTrainer.create({
      config,
      params: copyParams(params),
      lora,
      adapters: copyParams(adapters),
      options: { threads: 1, ...options },
    });
  const batch = sequences(60, 6);
  const rng = new Rng(61);
  const advantages = batch.map((row) => Float64Array.from(row, () => rng.next() - 0.5));
  const lossMask = batch.map((row) => Float64Array.from(row, (_, t) => (t > 0 ? 1 : 0)));
  // Old log-probs off the current ones, so the ratio and the clip matter.
  const old = (await trainer({}).score(batch)).logprobs.map((row) => row.map((x) => x + (rng.next() - 0.5) * 0.4));
  const step = async (options: { trainTokenBudget?: number; keptActivationBudget?: number }) => {
    const t = trainer(options);
    const report = await t.trainStep(batch, rlLoss({ oldLogprobs: old, advantages, lossMask }), { learningRate: 0.01 });
    const result = { report, adapters: t.adapterParams() };
    await t.release();
    return result;
  };
  const whole = await step({});
  for (const keptActivationBudget of [undefined, 0]) {
    const split = await step({ trainTokenBudget: 24, keptActivationBudget });
    assert.ok(Math.abs(split.report.loss - whole.report.loss) <= 1e-5 * Math.abs(whole.report.loss));
    assert.ok(Math.abs(split.report.gradNorm - whole.report.gradNorm) <= 1e-5 * whole.report.gradNorm);
    for (const [name, tensor] of whole.adapters) {
      const other = entry(Object.fromEntries(split.adapters), name).data;
      tensor.data.forEach((x, i) => {
        assert.ok(Math.abs(x - at(other, i)) <= 1e-6, `budget ${keptActivationBudget}: ${name}[${i}]`);
      });
    }
  }
});

test('a step keeps its scoring activations only when the whole batch fits the budget or is one run; never under dropout', () => {
  const lora = loraConfigSchema.parse({ rank: 2, alpha: 4 });
  const runs = [...trainingRuns(sequences(70, 6), config, { trainTokenBudget: 24 })];
  assert.ok(runs.length > 2, `${runs.length} runs`);
  let total = 0;
  for (const run of runs) total += activationBytes(config, run.packed.rows * run.packed.length);
  assert.equal(keepsActivations(runs, config, lora, total), true);
  assert.equal(keepsActivations(runs, config, lora, total - 1), false); // none kept, not the first few
  assert.equal(keepsActivations(runs.slice(0, 1), config, lora, 0), true);
  const dropout = loraConfigSchema.parse({ rank: 2, alpha: 4, dropout: 0.1 });
  assert.equal(keepsActivations(runs, config, dropout, total), false);
});

test('a value loss on a model without a value head is refused by name; temperature must be positive', async () => {
  const plain = modelConfigSchema.parse({ ...tiny, valueHead: false });
  const trainer = OnnxTrainer.create({ config: plain, params: initHostParams(plain, 1), options: { threads: 1 } });
  const batch = sequences(50, 2);
  await assert.rejects(trainer.forwardBackward(batch, linearLoss(batch, 1)), /trains a value head/);
  await assert.rejects(trainer.score(batch, { temperature: 0 }), /temperature must be > 0/);
  assert.throws(() => trainer.optimStep({ learningRate: 1 }), /no gradients/);
  await trainer.release();
});
