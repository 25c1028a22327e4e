import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { addGradients } from './autodiff.ts';
import { attr, Graph } from './graph.ts';
import { GraphBuilder } from './ops.ts';
import { assertGradientsMatch } from './gradient-check.ts';
import { Rng } from '../../core/rng.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed } from './session.ts';

test('Add, Sub, Mul, Div, Neg with broadcasting sum the gradient back to each input shape', async () => {
  await assertGradientsMatch('broadcast arithmetic', {
    inputs: [
      { name: 'a', shape: [2, 3, 4] },
      { name: 'b', shape: [3, 1] },
      { name: 'c', shape: [4] },
      { name: 'd', shape: [2, 1, 1], positive: true },
    ],
    build: (g, { a, b, c, d }) => g.neg(g.div(g.sub(g.mul(g.add(a!, b!), c!), b!), g.add(d!, g.mul(c!, c!)))),
  });
});

test('Exp, Log, Sqrt, Reciprocal, Sigmoid, Tanh, Pow (constant and input exponent), Cast, Identity', async () => {
  await assertGradientsMatch('unary', {
    inputs: [
      { name: 'x', shape: [2, 5], positive: true },
      { name: 'p', shape: [5], positive: true },
    ],
    build: (g, { x, p }) => {
      const tanh = at(g.graph.node('Tanh', [x!], {}, [{ dtype: 'float32', shape: [2, 5] }]), 0);
      const identity = at(
        g.graph.node('Identity', [g.cast(x!, 'float32')], {}, [{ dtype: 'float32', shape: [2, 5] }]),
        0,
      );
      const terms = [
        g.exp(x!),
        g.log(x!),
        g.sqrt(x!),
        g.reciprocal(x!),
        g.sigmoid(x!),
        tanh,
        g.pow(x!, g.scalar(2)),
        g.pow(x!, p!),
        identity,
      ];
      return terms.reduce((sum, term) => g.add(sum, g.mul(term, x!)));
    },
  });
});

test('ReduceSum / ReduceMean / ReduceMax / ReduceLogSumExp over some or all axes, with and without keepdims', async () => {
  await assertGradientsMatch('reductions', {
    inputs: [{ name: 'x', shape: [2, 3, 4] }],
    build: (g, { x }) => {
      const sum = g.reduceSum(x!, [1], false); // [2, 4]
      const mean = g.reduce('ReduceMean', x!, [0, 2], true); // [1, 3, 1]
      const max = g.reduce('ReduceMax', x!, [-1], false); // [2, 3]
      const lse = g.reduce('ReduceLogSumExp', x!, [2], true); // [2, 3, 1]
      const all = g.reduceSum(g.mul(x!, x!), [0, 1, 2], false); // []
      return g.add(g.add(g.add(g.unsqueeze(sum, [1]), mean), g.add(g.unsqueeze(max, [2]), lse)), all); // [2, 3, 4]
    },
  });
});

test('Softmax and LogSoftmax on the last and on an inner axis', async () => {
  await assertGradientsMatch('softmax', {
    inputs: [{ name: 'x', shape: [2, 3, 4] }],
    build: (g, { x }) => g.add(g.softmax(x!, -1), g.mul(g.logSoftmax(x!, 1), g.softmax(x!, 1))),
  });
});

test('MatMul: 2-D, rows × shared matrix, batched, broadcast batch, and a 2-D left side on a batched right side', async () => {
  await assertGradientsMatch('matmul', {
    inputs: [
      { name: 'a', shape: [3, 4] },
      { name: 'w', shape: [4, 2] },
      { name: 'x', shape: [2, 3, 4] },
      { name: 'p', shape: [2, 1, 3, 4] },
      { name: 'q', shape: [3, 4, 2] },
    ],
    build: (g, { a, w, x, p, q }) => {
      const plain = g.matMul(a!, w!); // [3, 2]
      const rows = g.matMul(x!, w!); // [2, 3, 2]
      const broadcast = g.matMul(p!, q!); // [2, 3, 3, 2]
      const leftShared = g.matMul(a!, q!); // [3, 3, 2]
      return g.add(g.add(g.add(broadcast, leftShared), g.unsqueeze(rows, [1])), plain); // [2, 3, 3, 2]
    },
  });
});

test('Gemm with every transA / transB combination and an alpha', async () => {
  await assertGradientsMatch('gemm', {
    inputs: [
      { name: 'a', shape: [3, 4] },
      { name: 'at', shape: [4, 3] },
      { name: 'b', shape: [4, 2] },
      { name: 'bt', shape: [2, 4] },
    ],
    build: (g, { a, at: aTransposed, b, bt }) => {
      const scaled = g.gemm(aTransposed!, bt!, { transA: true, transB: true });
      const node = at(g.graph.nodes, g.graph.info(scaled).producer as number);
      (node.attributes as Record<string, unknown>).alpha = attr.float(0.5);
      return g.add(
        g.add(g.gemm(a!, b!), g.gemm(aTransposed!, b!, { transA: true })),
        g.add(g.gemm(a!, bt!, { transB: true }), scaled),
      ); // [3, 2]
    },
  });
});

test('Reshape (0, −1, symbolic sizes), Transpose, Unsqueeze, Squeeze, Expand, Flatten', async () => {
  await assertGradientsMatch('shapes', {
    inputs: [
      { name: 'x', shape: [2, 3, 4], declared: ['B', 'T', 4] },
      { name: 'e', shape: [3, 1] },
    ],
    outputShape: [4, 6],
    build: (g, { x, e }) => {
      const moved = g.transpose(g.reshape(x!, [0, -1, 2]), [2, 0, 1]); // [2, B, T·2]
      const squeezed = g.squeeze(g.unsqueeze(moved, [0]), [0]);
      const expanded = at(
        g.graph.node('Expand', [e!, g.int64s([2, 3, 4])], {}, [{ dtype: 'float32', shape: [2, 3, 4] }]),
        0,
      );
      const flat = at(
        g.graph.node('Flatten', [g.mul(expanded, x!)], { axis: attr.int(2) }, [
          { dtype: 'float32', shape: ['B*T', 4] },
        ]),
        0,
      );
      return g.add(g.transpose(g.reshape(squeezed, [4, 6]), [0, 1]), g.reshape(flat, [4, 6]));
    },
  });
});

test('Slice (negative start, open end, run-time bounds), Concat (known and symbolic sizes), Split', async () => {
  await assertGradientsMatch('slices', {
    inputs: [
      { name: 'x', shape: [2, 5], declared: [2, 'L'] },
      { name: 'y', shape: [2, 3] },
    ],
    outputShape: [2, 12],
    build: (g, { x, y }) => {
      const tail = g.slice(x!, [-2], [2 ** 40], [1]); // [2, 2]
      const head = g.slice(x!, [0, 1], [1, 4], [0, 1]); // [1, 3]
      const length = g.slice(g.shapeOf(x!), [1], [2], [0]); // int64 [1] = L
      const middle = g.sliceDynamic(x!, g.int64s([1]), length, [1], 'L-1'); // [2, L−1]
      const parts = g.graph.node('Split', [y!, g.int64s([1, 2])], { axis: attr.int(1) }, [
        { dtype: 'float32', shape: [2, 1] },
        { dtype: 'float32', shape: [2, 2] },
      ]);
      const known = g.concat([tail, g.mul(at(parts, 1), at(parts, 1)), g.concat([head, head], 0)], 1); // [2, 7]
      return g.concat([g.mul(known, g.slice(known, [0], [1], [0])), middle, at(parts, 0)], 1); // [2, 7 + 4 + 1]
    },
  });
});

test('Gather (axis 0 with repeated ids, axis 1, negative ids), GatherElements (repeated ids), Where: integer and bool inputs get no gradient', async () => {
  await assertGradientsMatch('indexing', {
    inputs: [
      { name: 'table', shape: [5, 3] },
      { name: 'x', shape: [2, 4] },
      { name: 'other', shape: [4] },
    ],
    integers: [
      { name: 'ids', dtype: 'int32', shape: [2, 3], data: [1, 4, 1, 0, -1, 1] },
      { name: 'columns', dtype: 'int64', shape: [2], data: [3, 0] },
      { name: 'picks', dtype: 'int32', shape: [2, 3], data: [0, 0, 2, 3, 1, 3] },
      { name: 'keep', dtype: 'bool', shape: [2, 4], data: [1, 0, 1, 1, 0, 0, 1, 0] },
    ],
    outputShape: [2, 3, 3],
    build: (g, { table, x, other, ids, columns, picks, keep }) => {
      const rows = g.gather(table!, ids!, 0); // [2, 3, 3]
      const chosen = g.gather(x!, columns!, 1); // [2, 2]
      const picked = g.gatherElements(x!, picks!, 1); // [2, 3]
      const masked = g.where(keep!, x!, other!); // [2, 4]
      const extra = g.add(g.reduceSum(chosen, [1], true), g.slice(masked, [0], [3], [1])); // [2, 3]
      return g.mul(rows, g.unsqueeze(g.add(picked, extra), [2])); // [2, 3, 3]
    },
  });
});

test('an embedding gradient over many repeated ids is their exact sum on 2 threads, run after run (no scatter race)', async () => {
  const [V, D, N] = [4, 64, 20_000];
  const g = new GraphBuilder(new Graph());
  const table = g.graph.input('table', 'float32', [V, D]);
  const ids = g.graph.input('ids', 'int32', [N]);
  const weights = g.graph.input('weights', 'float32', [N, D]);
  g.graph.output(g.reduceSum(g.mul(g.gather(table, ids, 0), weights), [0, 1], false), 'loss');
  const [gradient] = addGradients(g, at(g.graph.outputs, 0), [table]);
  g.graph.output(at(g.graph.node('Identity', [gradient!], {}, [{ dtype: 'float32', shape: [V, D] }]), 0), 'grad');
  const session = await OnnxSession.create(serializeModel(g.graph), { threads: 2 });
  const rng = new Rng(3);
  const idData = Int32Array.from({ length: N }, () => rng.int(V));
  const weightData = Float32Array.from({ length: N * D }, () => rng.next() - 0.5);
  const expected = new Float64Array(V * D);
  idData.forEach((id, n) => {
    for (let d = 0; d < D; d++) expected[id * D + d] = (expected[id * D + d] ?? 0) + (weightData[n * D + d] ?? 0);
  });
  const feeds: Record<string, Feed> = {
    table: { dtype: 'float32', shape: [V, D], data: new Float32Array(V * D) },
    ids: { dtype: 'int32', shape: [N], data: idData },
    weights: { dtype: 'float32', shape: [N, D], data: weightData },
  };
  let first: Float32Array | null = null;
  for (let run = 0; run < 5; run++) {
    const out = (await session.run(feeds, ['grad'])).grad?.data as Float32Array;
    expected.forEach((x, i) => {
      assert.ok(Math.abs((out[i] as number) - x) <= 1e-3, `run ${run}: ∂table[${i}] ${out[i]} vs ${x}`);
    });
    first ??= out;
    assert.deepEqual(out, first, `run ${run}: the same bits as run 0`);
  }
  await session.release();
});

test('frozen values (initializers, inputs not differentiated) get no gradient nodes', async () => {
  const graph = await assertGradientsMatch('frozen', {
    inputs: [
      { name: 'x', shape: [3, 4] },
      { name: 'frozen', shape: [2, 2], differentiate: false },
    ],
    build: (g, { x, frozen }) => {
      const w = g.graph.initializer('w', {
        dtype: 'float32',
        shape: [4, 2],
        data: Float32Array.from({ length: 8 }, (_, i) => i / 8 - 0.5),
      });
      return g.matMul(g.matMul(x!, w), g.exp(frozen!)); // [3, 2]
    },
  });
  const backward = graph.nodes.slice(graph.nodes.findIndex((node) => node.op === 'ReduceSum') + 1);
  // ∂x = ((∂y · e^frozenᵀ) · wᵀ): two products; nothing differentiates w or the frozen input (no Exp, no Aᵀ·∂Y).
  assert.equal(backward.filter((node) => node.op === 'Gemm' || node.op === 'MatMul').length, 2);
  assert.ok(!backward.some((node) => node.op === 'Exp'));
  assert.ok(!backward.some((node) => node.op === 'Gemm' && node.attributes.transA?.value === 1));
});

test('a value the loss does not read gets zeros; an op without a rule and a non-scalar loss are refused by name', () => {
  const g = new GraphBuilder(new Graph());
  const x = g.graph.input('x', 'float32', [2]);
  const unused = g.graph.input('unused', 'float32', [3]);
  const loss = g.reduceSum(g.mul(x, x), [0], false);
  const [, zeros] = addGradients(g, loss, [x, unused]);
  assert.equal(at(g.graph.nodes, g.graph.info(zeros!).producer as number).op, 'ConstantOfShape');
  const h = new GraphBuilder(new Graph());
  const y = h.graph.input('y', 'float32', [2]);
  const erf = at(h.graph.node('Erf', [y], {}, [{ dtype: 'float32', shape: [2] }]), 0);
  assert.throws(
    () => addGradients(h, h.reduceSum(erf, [0], false), [y]),
    (error: unknown) => error instanceof InvalidArgumentError && /no gradient rule for Erf/.test(error.message),
  );
  assert.throws(() => addGradients(h, y, [y]), /must be a float32 scalar/);
});
