import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../core/rng.ts';
import type { TokenLoss } from '../core/loss.ts';
import { TransformerModel } from './transformer-model.ts';
import { generate } from './generate.ts';
import { saveCheckpoint, loadCheckpoint } from '../model/checkpoint.ts';
import type { HostParams, ModelConfigInput } from '../model/config.ts';
import { at } from '../core/indexing.ts';
import { tinyModelConfig } from './tiny-model-fixture.ts';

const tiny: ModelConfigInput = { ...tinyModelConfig, maxSeqLen: 32 };

function randomSequences(rng: Rng, count: number, vocab: number, minLength: number, maxLength: number): number[][] {
  return Array.from({ length: count }, () =>
    Array.from({ length: rng.range(minLength, maxLength) }, () => rng.int(vocab)),
  );
}

/** loss = Σ a·logπ + Σ b·entropy + Σ c·value with fixed random weights: its gradient is (a, b, c). */
function linearLoss(
  sequences: number[][],
  seed: number,
  withValue: boolean,
): { loss: TokenLoss; weights: Float32Array[][] } {
  const rng = new Rng(seed);
  const make = () =>
    sequences.map((s) => Float32Array.from({ length: s.length }, (_, t) => (t === 0 ? 0 : rng.normal())));
  const a = make();
  const b = make();
  const c = make();
  const loss: TokenLoss = {
    name: 'linear',
    dependsOnCurrent: true,
    compute: (input) => {
      let value = 0;
      input.logprobs.forEach((lp, i) => {
        lp.forEach((x, t) => {
          value += at(at(a, i), t) * x;
        });
      });
      input.entropies!.forEach((e, i) => {
        e.forEach((x, t) => {
          value += at(at(b, i), t) * x;
        });
      });
      if (withValue)
        input.values?.forEach((v, i) => {
          v.forEach((x, t) => {
            value += at(at(c, i), t) * x;
          });
        });
      return { loss: value, gradLogprobs: a, gradEntropies: b, gradValues: withValue ? c : undefined, metrics: {} };
    },
  };
  return { loss, weights: [a, b, c] };
}

async function lossAt(
  model: TransformerModel,
  sequences: number[][],
  weights: Float32Array[][],
  withValue: boolean,
): Promise<number> {
  const out = await model.score(sequences, { entropies: true });
  let value = 0;
  out.logprobs.forEach((lp, i) => {
    lp.forEach((x, t) => {
      value += at(at(at(weights, 0), i), t) * x;
    });
  });
  out.entropies!.forEach((e, i) => {
    e.forEach((x, t) => {
      value += at(at(at(weights, 1), i), t) * x;
    });
  });
  if (withValue)
    out.values!.forEach((v, i) => {
      v.forEach((x, t) => {
        value += at(at(at(weights, 2), i), t) * x;
      });
    });
  return value;
}

function clone(params: HostParams): HostParams {
  return new Map([...params].map(([name, t]) => [name, { shape: t.shape, data: t.data.slice() }]));
}

for (const variant of [
  {
    name: 'untied head, q/k/v bias, value head, GQA',
    config: { ...tiny, tieWordEmbeddings: false, attentionBias: true, valueHead: true },
  },
  { name: 'tied head', config: { ...tiny, tieWordEmbeddings: true } },
]) {
  test(`train-step gradients match finite differences for every parameter kind (${variant.name})`, async () => {
    const withValue = variant.config.valueHead === true;
    const model = await TransformerModel.create(variant.config, { seed: 3 });
    // Non-trivial norms and value head so their gradients are informative.
    const base = await model.hostParams();
    const rng = new Rng(11);
    for (const [name, t] of base) {
      if (name.endsWith('Norm') || name.startsWith('valueHead') || /\.b[qkv]$/.test(name)) {
        for (let i = 0; i < t.data.length; i++) t.data[i] = (name.endsWith('Norm') ? 1 : 0) + 0.3 * rng.normal();
      }
    }
    model.setParams(base);
    const sequences = randomSequences(new Rng(5), 3, 40, 6, 12);
    const { loss, weights } = linearLoss(sequences, 7, withValue);
    await model.forwardBackward(sequences, loss);
    const grads = await model.accumulatedGradients();
    model.zeroGradients();

    const kinds = new Map<string, string>(); // kind → first parameter name of that kind
    for (const name of base.keys())
      kinds.set(name.replace(/^layers\.\d+\./, ''), kinds.get(name.replace(/^layers\.\d+\./, '')) ?? name);
    const epsilon = 1e-2;
    for (const [kind, name] of kinds) {
      const g = grads.get(name)!.data;
      // Check the two entries with the largest analytic gradient.
      const order = [...g.keys()].sort((i, j) => Math.abs(at(g, j)) - Math.abs(at(g, i))).slice(0, 2);
      for (const index of order) {
        const plus = clone(base);
        const plusData = plus.get(name)!.data;
        plusData[index] = at(plusData, index) + epsilon;
        model.setParams(plus);
        const up = await lossAt(model, sequences, weights, withValue);
        const minus = clone(base);
        const minusData = minus.get(name)!.data;
        minusData[index] = at(minusData, index) - epsilon;
        model.setParams(minus);
        const down = await lossAt(model, sequences, weights, withValue);
        const numeric = (up - down) / (2 * epsilon);
        const analytic = at(g, index);
        const error = Math.abs(numeric - analytic) / Math.max(1e-3, Math.abs(numeric) + Math.abs(analytic));
        assert.ok(
          error < 0.03,
          `${kind} (${name}[${index}]): analytic ${analytic}, numeric ${numeric}, relative error ${error}`,
        );
      }
    }
  });
}

test('KV-cache sampling log-probs equal full-forward scoring (batch of different prompt lengths)', async () => {
  const model = await TransformerModel.create({ ...tiny, maxSeqLen: 64, valueHead: true }, { seed: 1 });
  const prompts = randomSequences(new Rng(2), 20, 40, 3, 17);
  for (const [temperature, prefillTokenBudget] of [
    [1, undefined],
    [0.7, 64],
  ] as const) {
    // A budget of 64 prefills the prompts in row groups.
    const rows = await generate(model, prompts, { maxNewTokens: 40, temperature, seed: 9, prefillTokenBudget });
    const scored = await model.score(
      prompts.map((p, b) => [...p, ...at(rows, b).tokens]),
      { temperature },
    );
    rows.forEach((row, b) => {
      assert.equal(row.tokens.length, 40);
      row.logprobs.forEach((lp, i) => {
        const reference = at(at(scored.logprobs, b), at(prompts, b).length + i);
        assert.ok(Math.abs(lp - reference) < 1e-4, `row ${b} token ${i}: sampled ${lp} scored ${reference}`);
      });
    });
  }
});

test('sampling honours stop tokens, greedy decoding is deterministic, and seeds reproduce', async () => {
  const model = await TransformerModel.create(tiny, { seed: 4 });
  const prompts = [
    [1, 2, 3],
    [4, 5, 6, 7, 8],
  ];
  const a = await generate(model, prompts, { maxNewTokens: 12, temperature: 0 });
  const b = await generate(model, prompts, { maxNewTokens: 12, temperature: 0 });
  assert.deepEqual(a, b);
  const s1 = await generate(model, prompts, { maxNewTokens: 12, temperature: 1, seed: 5 });
  const s2 = await generate(model, prompts, { maxNewTokens: 12, temperature: 1, seed: 5 });
  assert.deepEqual(s1, s2);
  const stop = at(at(s1, 0).tokens, 3);
  const stopped = await generate(model, prompts, { maxNewTokens: 12, temperature: 1, seed: 5, stopTokens: [stop] });
  assert.equal(at(stopped, 0).finishReason, 'stop');
  assert.equal(at(stopped, 0).tokens.at(-1), stop);
  assert.ok(at(stopped, 0).tokens.length <= 4);
  const topP = await generate(model, prompts, { maxNewTokens: 12, temperature: 1, topP: 1e-6, seed: 5 });
  assert.deepEqual(
    topP.map((r) => r.tokens),
    a.map((r) => r.tokens),
    'top-p → 0 is greedy',
  );
});

test('checkpoint round trip is bit-exact and training continues identically from it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-ckpt-'));
  try {
    const model = await TransformerModel.create(
      { ...tiny, vocabSize: 272, valueHead: true, attentionBias: true },
      { seed: 8 },
    );
    const sequences = randomSequences(new Rng(1), 4, 272, 8, 16);
    const sft: TokenLoss = {
      name: 'nll',
      dependsOnCurrent: false,
      compute: (input) => ({
        loss: 0,
        gradLogprobs: input.logprobs.map((l) => Float32Array.from(l, (_, t) => (t === 0 ? 0 : -0.05))),
        metrics: {},
      }),
    };
    await model.trainStep(sequences, sft, { learningRate: 1e-2 });
    const params = await model.hostParams();
    await saveCheckpoint(dir, { config: model.config, params, extra: { step: model.step } });
    const loaded = await loadCheckpoint(dir);
    assert.deepEqual(loaded.config, model.config);
    for (const [name, tensor] of params) {
      assert.deepEqual(loaded.params.get(name)!.shape, tensor.shape, name);
      assert.ok(
        Buffer.from(loaded.params.get(name)!.data.buffer).equals(Buffer.from(tensor.data.buffer)),
        `${name} differs`,
      );
    }
    const restored = await TransformerModel.fromParams(loaded.config, loaded.params);
    restored.loadOptimizerState(await model.optimizerState());
    const next = await model.trainStep(sequences, sft, { learningRate: 1e-2 });
    const nextRestored = await restored.trainStep(sequences, sft, { learningRate: 1e-2 });
    assert.equal(nextRestored.loss, next.loss);
    const after = await model.hostParams();
    const afterRestored = await restored.hostParams();
    for (const [name, tensor] of after) assert.deepEqual(afterRestored.get(name)!.data, tensor.data, name);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a loss that trains a value head is refused on a model without one', async () => {
  const model = await TransformerModel.create(tiny, { seed: 1 });
  const sequences = [[1, 2, 3]];
  const { loss } = linearLoss(sequences, 1, true);
  await assert.rejects(model.forwardBackward(sequences, loss), /value head/);
});

test('micro-batched training and scoring equal one big batch (gradients, scores, loss)', async () => {
  const sequences = randomSequences(new Rng(21), 9, 40, 5, 30);
  const { loss } = linearLoss(sequences, 4, false);
  const whole = await TransformerModel.create(tiny, { seed: 2 });
  const split = await TransformerModel.create(tiny, { seed: 2 });
  split.trainTokenBudget = 64; // 2 rows of 32 tokens per compiled call → 5 micro-batches
  split.scoreTokenBudget = 96;
  const a = await whole.forwardBackward(sequences, loss);
  const b = await split.forwardBackward(sequences, loss);
  assert.ok(Math.abs(a.loss - b.loss) < 1e-4);
  const ga = await whole.accumulatedGradients();
  const gb = await split.accumulatedGradients();
  for (const [name, tensor] of ga) {
    const other = gb.get(name)!.data;
    tensor.data.forEach((x, i) => {
      assert.ok(Math.abs(x - at(other, i)) < 1e-5 + 1e-4 * Math.abs(x), `${name}[${i}]: ${x} vs ${other[i]}`);
    });
  }
  const sa = await whole.score(sequences, { entropies: true });
  const sb = await split.score(sequences, { entropies: true });
  sa.logprobs.forEach((lp, i) => {
    lp.forEach((x, t) => {
      assert.ok(Math.abs(x - at(at(sb.logprobs, i), t)) < 1e-5);
    });
  });
});

test('detachValueHead: a value-only loss trains the value head alone; shared, it also moves the trunk', async () => {
  const sequences = randomSequences(new Rng(11), 4, 40, 5, 12);
  const weights = sequences.map((s) => Float32Array.from({ length: s.length }, (_, t) => (t === 0 ? 0 : 1)));
  const valueLoss = (detach: boolean): TokenLoss => ({
    name: 'value-only',
    dependsOnCurrent: true,
    detachValueHead: detach,
    compute: (input) => ({
      loss: input.values!.reduce((n, v) => n + v.reduce((m, x) => m + x, 0), 0),
      gradLogprobs: sequences.map((s) => new Float32Array(s.length)),
      gradValues: weights,
      metrics: {},
    }),
  });
  for (const detach of [true, false]) {
    const model = await TransformerModel.create({ ...tiny, valueHead: true }, { seed: 12 });
    // The value head starts at zero, so the first step cannot reach the trunk either way; the second can.
    await model.trainStep(sequences, valueLoss(detach), { learningRate: 1e-2 });
    const before = await model.hostParams();
    await model.trainStep(sequences, valueLoss(detach), { learningRate: 1e-2 });
    const after = await model.hostParams();
    const moved = [...before]
      .filter(([name, t]) => after.get(name)!.data.some((x, i) => x !== t.data[i]))
      .map(([name]) => name);
    assert.ok(moved.includes('valueHead.w') && moved.includes('valueHead.b'), `${detach}: the value head moves`);
    const trunk = moved.filter((name) => !name.startsWith('valueHead'));
    if (detach) assert.deepEqual(trunk, [], 'detached: nothing but the value head moves');
    else assert.ok(trunk.length > 5, `shared: the trunk moves too (${trunk.length} tensors)`);
  }
});
