import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../core/indexing.ts';
import { Graph } from './graph.ts';
import { GraphBuilder } from './ops.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession } from './session.ts';

test('a built graph runs in onnxruntime: softmax(x W + b) over a symbolic batch axis, int64 shapes, a float attribute', async () => {
  const g = new GraphBuilder(new Graph());
  const x = g.graph.input('x', 'float32', ['N', 3]);
  const w = g.graph.initializer('w', { dtype: 'float32', shape: [3, 2], data: Float32Array.from([1, 2, 3, 4, 5, 6]) });
  const b = g.floats([0.5, -0.5], [2]);
  const logits = g.add(g.matMul(x, w), b); // [N, 2]
  assert.deepEqual(g.shape(logits), ['N', 2]);
  const probs = g.graph.output(g.softmax(logits, -1), 'probs');
  const flat = g.graph.output(g.reshape(g.transpose(logits, [1, 0]), [-1]), 'flat'); // [2·N]
  assert.deepEqual(g.shape(flat), ['N*2']);
  const picked = g.graph.output(g.gather(x, g.graph.input('rows', 'int32', ['M']), 0), 'picked'); // [M, 3]
  assert.deepEqual(g.shape(picked), ['M', 3]);
  const eps = at(
    g.graph.node('LeakyRelu', [logits], { alpha: { kind: 'float', value: 0.25 } }, [
      { dtype: 'float32', shape: ['N', 2] },
    ]),
    0,
  );
  g.graph.output(eps, 'leaky');
  void probs;

  const session = await OnnxSession.create(serializeModel(g.graph), { threads: 1 });
  const out = await session.run({
    x: { dtype: 'float32', shape: [2, 3], data: Float32Array.from([1, 0, 0, -1, -1, -1]) },
    rows: { dtype: 'int32', shape: [1], data: Int32Array.from([1]) },
  });
  // logits: row 0 = [1.5, 1.5]; row 1 = [-9+0.5, -12-0.5] = [-8.5, -12.5]
  assert.deepEqual([...out.flat!.data], [1.5, -8.5, 1.5, -12.5]);
  const p = out.probs!.data as Float32Array;
  assert.ok(Math.abs(at(p, 0) - 0.5) < 1e-7 && Math.abs(at(p, 2) - 1 / (1 + Math.exp(-4))) < 1e-6);
  assert.deepEqual([...out.picked!.data], [-1, -1, -1]);
  assert.deepEqual([...out.leaky!.data], [1.5, 1.5, -8.5 * 0.25, -12.5 * 0.25]);
  assert.deepEqual(out.probs!.shape, [2, 2]);
  await session.release();
});
