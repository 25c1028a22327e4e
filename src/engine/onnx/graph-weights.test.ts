import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entry } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { modelConfigSchema, type HostParams } from '../../model/config.ts';
import { initLoraParams, loraConfigSchema } from '../../model/lora.ts';
import { initHostParams } from '../../model/params.ts';
import { ColumnBlocks, type TensorData } from './graph.ts';
import { joinedData, joinedName, joinedShapes } from './graph-weights.ts';
import { quantizeNBits } from './matmul-nbits.ts';
import { buildModelGraph, type ModelGraphOptions } from './model-graph.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed } from './session.ts';
import { runFeeds, trainingRuns } from './train-runs.ts';

const config = modelConfigSchema.parse({
  vocabSize: 40,
  hiddenSize: 48,
  numLayers: 2,
  numHeads: 4,
  numKvHeads: 2,
  intermediateSize: 80,
  maxSeqLen: 32,
  attentionBias: true,
  initStd: 0.3,
});

/** The float32 matrix a ColumnBlocks stands for, in row-major order. */
function joinedMatrix(data: TensorData | undefined): Float32Array {
  assert.ok(data instanceof ColumnBlocks, 'a joined weight is held as column blocks');
  const bytes = data.rowBytes();
  const out = new Uint8Array(bytes.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of bytes) {
    out.set(part, offset);
    offset += part.length;
  }
  return new Float32Array(out.buffer);
}

test('joinedData holds q, k, v (and gate, up) as column blocks side by side, no copy; joinedShapes names what it holds', () => {
  const params = initHostParams(config, 3);
  const data = joinedData(config, params);
  const shapes = joinedShapes(config);
  assert.deepEqual([...data.keys()].sort(), [...shapes.keys()].sort());
  for (const layer of [0, 1]) {
    assert.deepEqual(shapes.get(joinedName(layer, ['wq', 'wk', 'wv'])), [48, 48 + 24 + 24]);
    const qkv = joinedMatrix(data.get(joinedName(layer, ['wq', 'wk', 'wv'])));
    const [q, k, v] = ['wq', 'wk', 'wv'].map((w) => params.get(`layers.${layer}.${w}`)?.data ?? new Float32Array());
    for (const row of [0, 17, 47]) {
      const expected = [
        ...(q?.subarray(row * 48, row * 48 + 48) ?? []),
        ...(k?.subarray(row * 24, row * 24 + 24) ?? []),
        ...(v?.subarray(row * 24, row * 24 + 24) ?? []),
      ];
      assert.deepEqual([...qkv.subarray(row * 96, row * 96 + 96)], expected);
    }
    const gateUp = data.get(joinedName(layer, ['wGate', 'wUp']));
    assert.ok(gateUp instanceof ColumnBlocks && gateUp.blocks[0] === params.get(`layers.${layer}.wGate`)?.data);
    assert.deepEqual(shapes.get(joinedName(layer, ['wGate', 'wUp'])), [48, 160]);
    assert.equal(data.get(`layers.${layer}.wo`), params.get(`layers.${layer}.wo`)?.data);
  }
  assert.throws(
    () => new ColumnBlocks([new Float32Array(6), new Float32Array(5)], 2),
    /5 values, not a whole number of 2 rows/,
  );
});

test('an int8 graph holds a joined weight as the codes of the joined matrix (each projection’s own, side by side)', () => {
  const params = initHostParams(config, 4);
  const graph = buildModelGraph({ config, params, baseQuantization: 'int8' });
  const initializer = (name: string) =>
    [...graph.initializers].find(([id]) => graph.info(id).name === name)?.[1].data as Uint8Array | Float32Array;
  const name = joinedName(1, ['wq', 'wk', 'wv']);
  const expected = quantizeNBits(joinedMatrix(joinedData(config, params).get(name)), 48, 96, 'in-out', 8);
  assert.deepEqual([...initializer(`${name}.codes`)], [...expected.packed]);
  assert.deepEqual([...initializer(`${name}.scales`)], [...expected.scales]);
  assert.deepEqual([...initializer(`${name}.zeroPoints`)], [...expected.zeroPoints]);
  assert.equal(initializer('layers.1.wq.codes'), undefined);
});

/** The logits of one scoring run of `batch` on 2 threads. */
async function logitsOf(options: ModelGraphOptions, batch: number[][], arrays: HostParams[]): Promise<Float32Array> {
  const session = await OnnxSession.create(serializeModel(buildModelGraph({ ...options, cache: false })), {
    threads: 2,
  });
  const [run] = [...trainingRuns(batch, options.config, {})];
  if (run === undefined) throw new RangeError('no run');
  const feeds: Record<string, Feed> = runFeeds(run, 1, options.config, arrays);
  const out = await session.run(feeds, ['logits']);
  await session.release();
  return entry(out, 'logits').data as Float32Array;
}

test('a graph holding joined projections gives the logits of the one with each apart, to the bit (LoRA on every projection)', async () => {
  const params = initHostParams(config, 5);
  const lora = loraConfigSchema.parse({
    rank: 4,
    alpha: 8,
    targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  });
  const rng = new Rng(6);
  const adapters: HostParams = new Map(
    [...initLoraParams(config, lora, 7)].map(([name, t]) => [
      name,
      { shape: t.shape, data: Float32Array.from(t.data, () => rng.next() - 0.5) },
    ]),
  );
  const batch = Array.from({ length: 5 }, (_, b) => Array.from({ length: 9 + b }, (_, t) => (7 * b + 3 * t) % 40));
  const joined = await logitsOf({ config, params, lora }, batch, [adapters]);
  const apart = await logitsOf({ config, lora, weights: 'inputs' }, batch, [params, adapters]);
  assert.equal(joined.length, apart.length);
  let differing = 0;
  joined.forEach((x, i) => {
    if (x !== apart[i]) differing += 1;
  });
  assert.equal(differing, 0, `${differing} of ${joined.length} logits differ`);
});
