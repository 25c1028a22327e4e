import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at, entry } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { modelConfigSchema, type HostParams, type ModelConfigInput } from '../../model/config.ts';
import { initHostParams } from '../../model/params.ts';
import { initLoraParams, loraConfigSchema, loraShapes } from '../../model/lora.ts';
import { addGradients } from './autodiff.ts';
import { Graph } from './graph.ts';
import { buildModelGraph, loraMaskName, type ModelGraphOptions } from './model-graph.ts';
import { GraphBuilder } from './ops.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed } from './session.ts';
import { runFeeds, trainingRuns } from './train-runs.ts';

function sequences(seed: number, count: number, vocab: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: count }, () => Array.from({ length: rng.range(5, 14) }, () => rng.int(vocab)));
}

/** Runs the model graph once over `batch` (one run); returns the fetched outputs. */
async function runGraph(
  options: ModelGraphOptions,
  batch: number[][],
  extra: (feeds: Record<string, Feed>) => void = () => {},
  adapters: HostParams = new Map(),
) {
  const session = await OnnxSession.create(serializeModel(buildModelGraph({ ...options, cache: false })), {
    threads: 1,
  });
  const [run] = [...trainingRuns(batch, options.config, {})];
  if (run === undefined) throw new RangeError('no run');
  const feeds = runFeeds(run, 1, options.config, [adapters]);
  extra(feeds);
  const out = await session.run(feeds, ['logits', 'target_logprobs']);
  await session.release();
  return {
    logits: entry(out, 'logits').data as Float32Array,
    logprobs: entry(out, 'target_logprobs').data as Float32Array,
    targets: run.targets,
  };
}

test('target log-probs over a 49,152-token vocabulary: max-shifted LogSoftmax within 1e-5 of float64 (its own output rounding), ≥ 5× closer than ReduceLogSumExp', async () => {
  const config = modelConfigSchema.parse({
    vocabSize: 49152,
    hiddenSize: 16,
    numLayers: 1,
    numHeads: 2,
    numKvHeads: 1,
    intermediateSize: 16,
    maxSeqLen: 64,
    initStd: 1,
  });
  const params = initHostParams(config, 1);
  const batch = sequences(2, 6, config.vocabSize);
  const { logits, logprobs, targets } = await runGraph({ config, params }, batch);
  const V = config.vocabSize;
  const M = targets.length;
  // The same logits through the old head: logits[target] − ReduceLogSumExp(logits).
  const g = new GraphBuilder(new Graph());
  const x = g.graph.input('x', 'float32', [M, V]);
  const t = g.graph.input('t', 'int32', [M, 1]);
  g.graph.output(g.sub(g.gatherElements(x, t, 1), g.reduce('ReduceLogSumExp', x, [1])), 'old');
  const session = await OnnxSession.create(serializeModel(g.graph), { threads: 1 });
  const oldOut = entry(
    await session.run({
      x: { dtype: 'float32', shape: [M, V], data: logits },
      t: { dtype: 'int32', shape: [M, 1], data: targets },
    }),
    'old',
  ).data as Float32Array;
  await session.release();
  let newError = 0;
  let oldError = 0;
  for (let m = 0; m < M; m++) {
    let max = -Infinity;
    for (let v = 0; v < V; v++) max = Math.max(max, at(logits, m * V + v));
    let sum = 0;
    for (let v = 0; v < V; v++) sum += Math.exp(at(logits, m * V + v) - max);
    const exact = at(logits, m * V + at(targets, m)) - max - Math.log(sum); // float64
    newError += Math.abs(at(logprobs, m) - exact) / M;
    oldError += Math.abs(at(oldOut, m) - exact) / M;
  }
  assert.ok(newError <= 1e-5, `LogSoftmax mean |error| ${newError}`);
  assert.ok(oldError >= 5 * newError, `ReduceLogSumExp mean |error| ${oldError} vs LogSoftmax ${newError}`);
});

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

test('weights as graph inputs score exactly as weights as initializers (biases, q/k norms, value head)', async () => {
  const config = modelConfigSchema.parse(tiny);
  const params = initHostParams(config, 4);
  const batch = sequences(3, 4, config.vocabSize);
  const stored = await runGraph({ config, params }, batch);
  const fed = await runGraph({ config, weights: 'inputs' }, batch, (feeds) => {
    for (const [name, tensor] of params) feeds[name] = { dtype: 'float32', shape: tensor.shape, data: tensor.data };
  });
  stored.logprobs.forEach((x, i) => {
    assert.ok(Math.abs(x - at(fed.logprobs, i)) <= 1e-6, `row ${i}: ${x} vs ${at(fed.logprobs, i)}`);
  });
});

test('LoRA dropout masks: all 1 equals the graph without dropout; all 0 drops every adapter (the base model)', async () => {
  const config = modelConfigSchema.parse(tiny);
  const lora = loraConfigSchema.parse({ rank: 2, alpha: 4, dropout: 0.5 });
  const params = initHostParams(config, 5);
  const rng = new Rng(9);
  const adapters: HostParams = new Map(
    [...initLoraParams(config, lora, 6)].map(([name, t]) => [
      name,
      { shape: t.shape, data: Float32Array.from(t.data, () => rng.next() - 0.5) },
    ]),
  );
  const batch = sequences(7, 3, config.vocabSize);
  const masks = (value: number) => (feeds: Record<string, Feed>) => {
    const tokens = entry(feeds, 'tokens');
    const [B = 0, T = 0] = tokens.shape;
    for (const [name, shape] of loraShapes(config, lora)) {
      if (!name.endsWith('.loraA')) continue;
      const input = at(shape, 0);
      feeds[loraMaskName(name.slice(0, -'.loraA'.length))] = {
        dtype: 'float32',
        shape: [B, T, input],
        data: new Float32Array(B * T * input).fill(value),
      };
    }
  };
  const plain = await runGraph({ config, params, lora }, batch, () => {}, adapters);
  const ones = await runGraph({ config, params, lora, dropout: true }, batch, masks(1), adapters);
  const zeros = await runGraph({ config, params, lora, dropout: true }, batch, masks(0), adapters);
  const base = await runGraph({ config, params }, batch);
  let adapted = 0;
  plain.logprobs.forEach((x, i) => {
    assert.ok(Math.abs(x - at(ones.logprobs, i)) <= 1e-6);
    assert.ok(Math.abs(at(base.logprobs, i) - at(zeros.logprobs, i)) <= 1e-6);
    adapted = Math.max(adapted, Math.abs(x - at(base.logprobs, i)));
  });
  assert.ok(adapted > 1e-3, 'the adapters change the log-probs');
});

test('stopGradient: autodiff treats the value as a constant (∂/∂x Σ x · stop(x) = x, not 2x)', async () => {
  const g = new GraphBuilder(new Graph());
  const x = g.graph.input('x', 'float32', [3]);
  const loss = g.reduceSum(g.mul(x, g.stopGradient(x)), [0], false);
  const [dx] = addGradients(g, loss, [x]);
  if (dx === undefined) throw new RangeError('no gradient');
  g.graph.output(g.graph.node('Identity', [dx], {}, [{ dtype: 'float32', shape: [3] }])[0] ?? dx, 'dx');
  const session = await OnnxSession.create(serializeModel(g.graph), { threads: 1 });
  const out = await session.run({ x: { dtype: 'float32', shape: [3], data: Float32Array.of(1, -2, 3) } }, ['dx']);
  assert.deepEqual([...(entry(out, 'dx').data as Float32Array)], [1, -2, 3]);
  await session.release();
});

test('buildModelGraph adapterGroups: one input pair per set and adapter_rows; refused without LoRA, with dropout or not a positive integer', () => {
  const config = modelConfigSchema.parse({
    vocabSize: 40,
    hiddenSize: 16,
    numLayers: 1,
    numHeads: 4,
    numKvHeads: 2,
    intermediateSize: 32,
  });
  const lora = loraConfigSchema.parse({ rank: 4, alpha: 8 });
  const graph = buildModelGraph({ config, lora, weights: 'inputs', adapterGroups: 3 });
  const names = graph.inputs.map((id) => graph.info(id).name);
  assert.ok(names.includes('adapter_rows'));
  for (const name of loraShapes(config, lora).keys())
    assert.deepEqual(
      [0, 1, 2].map((k) => names.includes(`${name}.group${k}`)),
      [true, true, true],
      name,
    );
  assert.ok(!names.some((name) => name.endsWith('.loraA')), 'no ungrouped adapter inputs');
  assert.throws(
    () => buildModelGraph({ config, weights: 'inputs', adapterGroups: 2 }),
    /needs a LoRA config and no dropout/,
  );
  assert.throws(
    () => buildModelGraph({ config, lora, weights: 'inputs', adapterGroups: 2, dropout: true }),
    /needs a LoRA config and no dropout/,
  );
  assert.throws(
    () => buildModelGraph({ config, lora, weights: 'inputs', adapterGroups: 0 }),
    /positive integer, got 0/,
  );
});
