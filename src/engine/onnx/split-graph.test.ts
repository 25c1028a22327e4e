import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at, entry } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { addGradients } from './autodiff.ts';
import { Graph } from './graph.ts';
import { GraphBuilder } from './ops.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed } from './session.ts';
import { splitGraph } from './split-graph.ts';

/** loss = Σ (x W) ⊙ sigmoid(x W) (SwiGLU's silu): the backward reads x W, its sigmoid and (for W) x. */
function siluGraph() {
  const g = new GraphBuilder(new Graph({ opset: 17 }));
  const x = g.graph.input('x', 'float32', [3, 4]);
  const w = g.graph.input('w', 'float32', [4, 5]);
  const a = g.matMul(x, w); // [3, 5]
  const silu = g.graph.output(g.mul(a, g.sigmoid(a)), 'silu');
  const boundary = g.graph.nodes.length;
  const firstBackwardValue = g.graph.values.length;
  const loss = g.graph.output(g.reduceSum(silu, [0, 1], false), 'loss');
  const [gradient] = addGradients(g, loss, [w]);
  g.graph.output(
    at(g.graph.node('Identity', [gradient as number], {}, [{ dtype: 'float32', shape: [4, 5] }]), 0),
    'grad_w',
  );
  return { graph: g.graph, boundary, firstBackwardValue, silu, a };
}

test('splitGraph runs sigmoid(a) and a ⊙ sigmoid(a) again in the backward: only x W crosses, same gradient', async () => {
  const { graph, boundary, firstBackwardValue, silu, a } = siluGraph();
  const split = splitGraph(graph, { boundary, firstBackwardValue, forwardOutputs: [silu] });
  const dtypeOf = (name: string) => graph.values.find((value) => value.name === name)?.dtype ?? 'float32';
  // Integer shape values cross too (hoisted into the forward); of the float32 ones, only x W.
  const floats = split.transferred.filter((name) => dtypeOf(name) === 'float32');
  assert.deepEqual(floats, [graph.info(a).name]);
  const rng = new Rng(3);
  const feed = (shape: number[]): Feed => ({
    dtype: 'float32',
    shape,
    data: Float32Array.from({ length: shape.reduce((n, d) => n * d, 1) }, () => rng.next() - 0.5),
  });
  const feeds = { x: feed([3, 4]), w: feed([4, 5]) };
  const whole = await OnnxSession.create(serializeModel(graph));
  const expected = entry(await whole.run(feeds, ['grad_w']), 'grad_w', 'output').data;
  const forward = await OnnxSession.create(serializeModel(split.forward));
  const backward = await OnnxSession.create(serializeModel(split.backward));
  const crossed = await forward.run(feeds, split.transferred);
  const backwardFeeds: Record<string, Feed> = { ...feeds };
  for (const name of split.transferred)
    backwardFeeds[name] = { dtype: dtypeOf(name), ...entry(crossed, name, 'output') };
  const inputs = Object.fromEntries(backward.inputNames.map((name) => [name, entry(backwardFeeds, name, 'feed')]));
  const actual = entry(await backward.run(inputs, ['grad_w']), 'grad_w', 'output').data;
  assert.deepEqual([...actual], [...expected]);
  for (const session of [whole, forward, backward]) await session.release();
});
