/**
 * Typed op helpers over the IR (graph.ts), each inferring its outputs' dtype and shape, for the
 * ONNX opset 17 ops the model graphs use. One method per op, named after it (camelCase); the
 * node is stored with its standard op type, inputs and attributes, exactly as ONNX defines them
 * (https://onnx.ai/onnx/operators/), so passes over `graph.nodes` read ONNX semantics:
 *   ReduceMean / ReduceMax / ReduceLogSumExp take `axes` as an attribute (opset 17),
 *   ReduceSum, Unsqueeze, Squeeze, Slice and Reshape take them as int64 constant inputs.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { attr, Graph, type DataType, type Dim, type Shape, type ValueId } from './graph.ts';

/** Broadcast of two shapes (numpy rules); a symbolic size meets 1 or itself. */
export function broadcastShapes(a: Shape, b: Shape): Dim[] {
  const rank = Math.max(a.length, b.length);
  const out: Dim[] = [];
  for (let i = 0; i < rank; i++) {
    const x = a[a.length - rank + i] ?? 1;
    const y = b[b.length - rank + i] ?? 1;
    if (x === 1) out.push(y);
    else if (y === 1 || x === y || typeof y === 'string') out.push(x);
    else if (typeof x === 'string') out.push(y);
    else throw new InvalidArgumentError(`cannot broadcast shapes [${a}] and [${b}]`);
  }
  return out;
}

function normaliseAxis(axis: number, rank: number): number {
  return axis < 0 ? axis + rank : axis;
}

/** Product of sizes as a number when all are known, else a symbolic 'A*B*…' expression. */
function dimProduct(dims: readonly Dim[]): Dim {
  let known = 1;
  const symbols: string[] = [];
  for (const d of dims) {
    if (typeof d === 'number') known *= d;
    else symbols.push(...d.split('*'));
  }
  if (symbols.length === 0) return known;
  return known === 1 ? symbols.join('*') : [...symbols, String(known)].join('*');
}

/** The size -1 stands for in a Reshape: total / known part of the target. */
function inferredDim(input: Shape, target: readonly Dim[]): Dim {
  const total = dimProduct(input);
  const rest = dimProduct(target.filter((d) => d !== -1));
  if (typeof total === 'number' && typeof rest === 'number') return total / rest;
  const factors = String(total).split('*');
  for (const factor of String(rest).split('*')) {
    const at = factors.indexOf(factor);
    if (at >= 0) factors.splice(at, 1);
  }
  return factors.length === 0 ? 1 : factors.join('*');
}

export class GraphBuilder {
  constructor(readonly graph: Graph = new Graph()) {}

  shape(id: ValueId): Shape {
    return this.graph.info(id).shape;
  }

  dtype(id: ValueId): DataType {
    return this.graph.info(id).dtype;
  }

  private one(op: string, inputs: ValueId[], dtype: DataType, shape: Shape, attributes = {}, domain = ''): ValueId {
    return at(this.graph.node(op, inputs, attributes, [{ dtype, shape }], domain), 0);
  }

  // constants -----------------------------------------------------------------------------------

  /** An int64 vector constant (shapes, axes, slice bounds). */
  int64s(values: readonly number[]): ValueId {
    return this.graph.initializer(undefined, {
      dtype: 'int64',
      shape: [values.length],
      data: BigInt64Array.from(values.map(BigInt)),
    });
  }

  /** A float32 constant of the given shape ([] for a scalar). */
  floats(values: readonly number[] | Float32Array, shape: readonly number[] = [values.length]): ValueId {
    return this.graph.initializer(undefined, { dtype: 'float32', shape, data: Float32Array.from(values) });
  }

  scalar(value: number): ValueId {
    return this.floats([value], []);
  }

  // elementwise ---------------------------------------------------------------------------------

  private binary(op: string, a: ValueId, b: ValueId, dtype = this.dtype(a)): ValueId {
    return this.one(op, [a, b], dtype, broadcastShapes(this.shape(a), this.shape(b)));
  }

  add(a: ValueId, b: ValueId): ValueId {
    return this.binary('Add', a, b);
  }
  sub(a: ValueId, b: ValueId): ValueId {
    return this.binary('Sub', a, b);
  }
  mul(a: ValueId, b: ValueId): ValueId {
    return this.binary('Mul', a, b);
  }
  div(a: ValueId, b: ValueId): ValueId {
    return this.binary('Div', a, b);
  }
  pow(a: ValueId, b: ValueId): ValueId {
    return this.binary('Pow', a, b);
  }
  equal(a: ValueId, b: ValueId): ValueId {
    return this.binary('Equal', a, b, 'bool');
  }
  where(condition: ValueId, a: ValueId, b: ValueId): ValueId {
    const shape = broadcastShapes(broadcastShapes(this.shape(condition), this.shape(a)), this.shape(b));
    return this.one('Where', [condition, a, b], this.dtype(a), shape);
  }

  private unary(op: string, x: ValueId): ValueId {
    return this.one(op, [x], this.dtype(x), this.shape(x));
  }

  neg(x: ValueId): ValueId {
    return this.unary('Neg', x);
  }
  sqrt(x: ValueId): ValueId {
    return this.unary('Sqrt', x);
  }
  reciprocal(x: ValueId): ValueId {
    return this.unary('Reciprocal', x);
  }
  exp(x: ValueId): ValueId {
    return this.unary('Exp', x);
  }
  log(x: ValueId): ValueId {
    return this.unary('Log', x);
  }
  sigmoid(x: ValueId): ValueId {
    return this.unary('Sigmoid', x);
  }
  cast(x: ValueId, to: DataType): ValueId {
    const code = { float32: 1, int32: 6, int64: 7, bool: 9, uint8: 2 }[to];
    return this.one('Cast', [x], to, this.shape(x), { to: attr.int(code) });
  }

  // linear algebra and reductions ------------------------------------------------------------------

  /** numpy matmul: [..., n, k] × [..., k, m] → [..., n, m] (batch axes broadcast; a 2-D right side is shared). */
  matMul(a: ValueId, b: ValueId): ValueId {
    const sa = this.shape(a);
    const sb = this.shape(b);
    if (sa.length < 2 || sb.length < 2) throw new InvalidArgumentError(`MatMul needs rank ≥ 2, got [${sa}] × [${sb}]`);
    const batch = broadcastShapes(sa.slice(0, -2), sb.slice(0, -2));
    return this.one('MatMul', [a, b], this.dtype(a), [...batch, at(sa, sa.length - 2), at(sb, sb.length - 1)]);
  }

  /** General matrix product on 2-D operands: alpha · op(a) op(b), op = transpose where asked (no bias input). */
  gemm(
    a: ValueId,
    b: ValueId,
    { transA = false, transB = false }: { transA?: boolean; transB?: boolean } = {},
  ): ValueId {
    const sa = this.shape(a);
    const sb = this.shape(b);
    const rows = at(sa, transA ? 1 : 0, 'Gemm a shape');
    const columns = at(sb, transB ? 0 : 1, 'Gemm b shape');
    return this.one('Gemm', [a, b], this.dtype(a), [rows, columns], {
      transA: attr.int(transA ? 1 : 0),
      transB: attr.int(transB ? 1 : 0),
    });
  }

  private reducedShape(x: ValueId, axes: readonly number[], keepdims: boolean): Dim[] {
    const shape = this.shape(x);
    const normal = axes.map((a) => normaliseAxis(a, shape.length));
    return shape.flatMap((d, i) => (normal.includes(i) ? (keepdims ? [1] : []) : [d]));
  }

  /** ReduceMean / ReduceMax / ReduceLogSumExp (axes as an attribute in opset 17). */
  reduce(
    op: 'ReduceMean' | 'ReduceMax' | 'ReduceLogSumExp',
    x: ValueId,
    axes: readonly number[],
    keepdims = true,
  ): ValueId {
    return this.one(op, [x], this.dtype(x), this.reducedShape(x, axes, keepdims), {
      axes: attr.ints(axes),
      keepdims: attr.int(keepdims ? 1 : 0),
    });
  }

  /** ReduceSum (axes as an input since opset 13). */
  reduceSum(x: ValueId, axes: readonly number[], keepdims = true): ValueId {
    return this.one('ReduceSum', [x, this.int64s(axes)], this.dtype(x), this.reducedShape(x, axes, keepdims), {
      keepdims: attr.int(keepdims ? 1 : 0),
    });
  }

  softmax(x: ValueId, axis = -1): ValueId {
    return this.one('Softmax', [x], this.dtype(x), this.shape(x), { axis: attr.int(axis) });
  }

  /** x unchanged (an Identity) that autodiff treats as a constant: no gradient flows back through it. */
  stopGradient(x: ValueId): ValueId {
    const y = this.one('Identity', [x], this.dtype(x), this.shape(x));
    this.graph.gradientStops.add(y);
    return y;
  }

  logSoftmax(x: ValueId, axis = -1): ValueId {
    return this.one('LogSoftmax', [x], this.dtype(x), this.shape(x), { axis: attr.int(axis) });
  }

  // shape ops -----------------------------------------------------------------------------------

  /** Reshape; 0 copies the input's size on that axis, -1 is inferred (one at most). */
  reshape(x: ValueId, target: readonly number[]): ValueId {
    const input = this.shape(x);
    const copied: Dim[] = target.map((d, i) => (d === 0 ? at(input, i, 'Reshape input shape') : d));
    const shape = copied.map((d) => (d === -1 ? inferredDim(input, copied) : d));
    return this.one('Reshape', [x, this.int64s(target)], this.dtype(x), shape);
  }

  transpose(x: ValueId, perm: readonly number[]): ValueId {
    const shape = this.shape(x);
    return this.one(
      'Transpose',
      [x],
      this.dtype(x),
      perm.map((p) => at(shape, p, 'Transpose input shape')),
      { perm: attr.ints(perm) },
    );
  }

  concat(xs: readonly ValueId[], axis: number): ValueId {
    const head = at(xs, 0, 'Concat inputs');
    const first = this.shape(head);
    const a = normaliseAxis(axis, first.length);
    const shape = first.map((d, i) =>
      i === a ? sumDims(xs.map((x) => at(this.shape(x), a, 'Concat input shape'))) : d,
    );
    return this.one('Concat', [...xs], this.dtype(head), shape, { axis: attr.int(axis) });
  }

  /** x cut along `axis` into consecutive parts of the given (static) sizes. */
  split(x: ValueId, sizes: readonly number[], axis: number): ValueId[] {
    const shape = this.shape(x);
    const a = normaliseAxis(axis, shape.length);
    const parts = sizes.map((size) => ({ dtype: this.dtype(x), shape: shape.map((d, i) => (i === a ? size : d)) }));
    return this.graph.node('Split', [x, this.int64s(sizes)], { axis: attr.int(a) }, parts);
  }

  /** x[starts:ends] on the given axes (ends may be large to mean "to the end"). */
  slice(x: ValueId, starts: readonly number[], ends: readonly number[], axes: readonly number[]): ValueId {
    const shape = [...this.shape(x)];
    axes.forEach((axis, k) => {
      const a = normaliseAxis(axis, shape.length);
      const size = at(shape, a, 'Slice input shape');
      const start = at(starts, k, 'Slice starts');
      const end = at(ends, k, 'Slice ends');
      if (typeof size === 'number') {
        const clamp = (v: number) => Math.max(0, Math.min(size, v < 0 ? v + size : v));
        shape[a] = Math.max(0, clamp(end) - clamp(start));
      } else {
        shape[a] = end >= 0 && start >= 0 && end < 2 ** 30 ? end - start : `${size}[${start}:${end}]`;
      }
    });
    return this.one('Slice', [x, this.int64s(starts), this.int64s(ends), this.int64s(axes)], this.dtype(x), shape);
  }

  /** Shape (int64 [rank]) of a value at run time: for slice bounds that depend on dynamic sizes. */
  shapeOf(x: ValueId): ValueId {
    return this.one('Shape', [x], 'int64', [this.shape(x).length]);
  }

  /** Slice whose starts/ends are int64 [k] values computed in the graph (axes constant); the sliced sizes are symbolic. */
  sliceDynamic(x: ValueId, starts: ValueId, ends: ValueId, axes: readonly number[], sizeName: string): ValueId {
    const shape = [...this.shape(x)];
    for (const axis of axes) shape[normaliseAxis(axis, shape.length)] = sizeName;
    return this.one('Slice', [x, starts, ends, this.int64s(axes)], this.dtype(x), shape);
  }

  /** data.take(indices, axis): the axis is replaced by the indices' shape. */
  gather(data: ValueId, indices: ValueId, axis = 0): ValueId {
    const shape = this.shape(data);
    const a = normaliseAxis(axis, shape.length);
    return this.one(
      'Gather',
      [data, indices],
      this.dtype(data),
      [...shape.slice(0, a), ...this.shape(indices), ...shape.slice(a + 1)],
      { axis: attr.int(axis) },
    );
  }

  /** takeAlongAxis: out[i][j] = data[i][indices[i][j]] on `axis`; the output has the indices' shape. */
  gatherElements(data: ValueId, indices: ValueId, axis: number): ValueId {
    return this.one('GatherElements', [data, indices], this.dtype(data), this.shape(indices), { axis: attr.int(axis) });
  }

  unsqueeze(x: ValueId, axes: readonly number[]): ValueId {
    const shape: Dim[] = [...this.shape(x)];
    const rank = shape.length + axes.length;
    for (const axis of [...axes].map((a) => normaliseAxis(a, rank)).sort((p, q) => p - q)) shape.splice(axis, 0, 1);
    return this.one('Unsqueeze', [x, this.int64s(axes)], this.dtype(x), shape);
  }

  squeeze(x: ValueId, axes: readonly number[]): ValueId {
    const shape = this.shape(x);
    const normal = axes.map((a) => normaliseAxis(a, shape.length));
    return this.one(
      'Squeeze',
      [x, this.int64s(axes)],
      this.dtype(x),
      shape.filter((_, i) => !normal.includes(i)),
    );
  }
}

function sumDims(dims: readonly Dim[]): Dim {
  if (dims.every((d) => typeof d === 'number')) return (dims as number[]).reduce((s, d) => s + d, 0);
  return dims.join('+');
}
