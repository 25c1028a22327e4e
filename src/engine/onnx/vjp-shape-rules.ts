/**
 * Gradient rules of the shape and indexing ops: a gradient is routed back to where each element
 * came from.
 *
 *   Reshape / Squeeze / Unsqueeze / Flatten: reshape ∂y to x's shape     Transpose: the inverse perm
 *   Expand: sum ∂y back to x's shape                                      Concat / Split: slice / join ∂y
 *   Slice: pad ∂y with zeros back to x's shape (bounds normalised at run time, as Slice does)
 *   Gather: ∂y's rows summed per id (a one-hot matmul over Unique's ids), scattered into zeros of data's shape
 *   GatherElements: ScatterElements with reduction 'add'
 * Indices get no gradient (they are integers).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { attr, type Dim, type ValueId } from './graph.ts';
import type { GraphBuilder } from './ops.ts';
import type { VjpRule } from './autodiff.ts';
import {
  constantInts,
  forInput,
  gradientOf,
  input,
  intAttribute,
  intsAttribute,
  normaliseAxis,
  rawNode,
  reshapeLike,
  sizeOnAxis,
  zerosLike,
} from './vjp-helpers.ts';

const reshaped: VjpRule = (g, node, gradients) => [reshapeLike(g, gradientOf(gradients), input(node, 0))];

const transpose: VjpRule = (g, node, gradients) => {
  const rank = g.shape(input(node, 0)).length;
  const perm = intsAttribute(node, 'perm') ?? Array.from({ length: rank }, (_, i) => rank - 1 - i);
  const inverse = new Array<number>(rank);
  perm.forEach((p, i) => {
    inverse[p] = i;
  });
  return [g.transpose(gradientOf(gradients), inverse)];
};

const expand: VjpRule = (g, node, gradients) => [forInput(g, gradientOf(gradients), input(node, 0)), undefined];

/** An int64 index (as Slice reads it) moved into [0, size]: negative counts from the end. */
function clampIndex(g: GraphBuilder, index: ValueId, size: ValueId): ValueId {
  const zero = g.int64s([0]);
  const wrapped = g.where(rawNode(g, 'Less', [index, zero], 'bool', [1]), g.add(index, size), index);
  return rawNode(g, 'Min', [rawNode(g, 'Max', [wrapped, zero], 'int64', [1]), size], 'int64', [1]);
}

function asInt64(g: GraphBuilder, x: ValueId): ValueId {
  return g.dtype(x) === 'int64' ? x : g.cast(x, 'int64');
}

/** Slice(x, starts, ends, axes?, steps?) with steps of 1: ∂x = Pad(∂y, [begin…, end…]). */
const slice: VjpRule = (g, node, gradients) => {
  const x = input(node, 0);
  const rank = g.shape(x).length;
  const steps = constantInts(g, node, 4);
  if (steps?.some((s) => s !== 1)) throw new InvalidArgumentError(`gradient of Slice: steps must be 1, got [${steps}]`);
  const starts = asInt64(g, input(node, 1));
  const ends = asInt64(g, input(node, 2));
  const count = g.shape(starts)[0];
  if (typeof count !== 'number')
    throw new InvalidArgumentError('gradient of Slice: the number of sliced axes must be known');
  const axes = constantInts(g, node, 3) ?? Array.from({ length: count }, (_, i) => i);
  const zero = g.int64s([0]);
  const before: ValueId[] = new Array(rank).fill(zero);
  const after: ValueId[] = new Array(rank).fill(zero);
  axes.forEach((axis, k) => {
    const a = normaliseAxis(axis, rank);
    const size = sizeOnAxis(g, x, a);
    const pick = (bounds: ValueId) =>
      rawNode(g, 'Gather', [bounds, g.int64s([k])], 'int64', [1], { axis: attr.int(0) });
    const start = clampIndex(g, pick(starts), size);
    const end = rawNode(g, 'Max', [clampIndex(g, pick(ends), size), start], 'int64', [1]);
    before[a] = start;
    after[a] = g.sub(size, end);
  });
  const pads = g.concat([...before, ...after], 0);
  return [
    rawNode(g, 'Pad', [gradientOf(gradients), pads], 'float32', g.shape(x), { mode: attr.string('constant') }),
    undefined,
    undefined,
    undefined,
    undefined,
  ];
};

/** Concat: each input's gradient is its slice of ∂y along the axis (offsets computed at run time unless all sizes are known). */
const concat: VjpRule = (g, node, gradients, needs) => {
  const dy = gradientOf(gradients);
  const rank = g.shape(dy).length;
  const axis = normaliseAxis(intAttribute(node, 'axis', 0), rank);
  const sizes: Dim[] = node.inputs.map((x) => at(g.shape(x), axis, 'Concat input shape'));
  if (sizes.every((d) => typeof d === 'number')) {
    let offset = 0;
    return (sizes as number[]).map((size, i) => {
      offset += size;
      return needs[i] ? g.slice(dy, [offset - size], [offset], [axis]) : undefined;
    });
  }
  let start = g.int64s([0]);
  return node.inputs.map((x, i) => {
    const end = g.add(start, sizeOnAxis(g, x, axis));
    const gradient = needs[i]
      ? rawNode(g, 'Slice', [dy, start, end, g.int64s([axis])], 'float32', g.shape(x))
      : undefined;
    start = end;
    return gradient;
  });
};

/** Split: ∂x = Concat of the outputs' gradients (zeros for outputs the loss does not read). */
const split: VjpRule = (g, node, gradients) => {
  const axis = intAttribute(node, 'axis', 0);
  const parts = node.outputs.map((y, i) => gradients[i] ?? zerosLike(g, y));
  return [g.concat(parts, axis), undefined];
};

/** Indices as int64 with negative entries counted from the end of `size`. */
function wrappedIndices(g: GraphBuilder, indices: ValueId, size: ValueId): ValueId {
  const wide = asInt64(g, indices);
  return g.where(rawNode(g, 'Less', [wide, g.int64s([0])], 'bool', g.shape(wide)), g.add(wide, size), wide);
}

/**
 * Σ of the rows of `updates` [ids…, rest…] into `zeros` [size, rest…] at `ids` (int64, in range,
 * `q` dims), repeated ids summed — without ScatterND's reduction 'add': onnxruntime runs a
 * ScatterND's updates in parallel, so with 2+ threads the rows of a repeated id (an embedding's
 * tokens) raced and the sum lost or doubled some of them (a tiny GPT's embedding gradient off by
 * 10%). The rows of equal ids are summed first by a matmul with their one-hot map [U, N] (each of
 * Unique's ids compared with every id: a fixed order, deterministic), then each id is written once.
 */
function scatterAddRows(g: GraphBuilder, zeros: ValueId, ids: ValueId, updates: ValueId, q: number): ValueId {
  const flatIds = g.reshape(ids, [-1]); // [N]
  // Symbolic sizes of their own: a graph's same-named sizes must agree (split graphs export these).
  const [N, U, R] = ['ids', 'distinct', 'row'].map((size) => `gather${flatIds}.${size}`) as [string, string, string];
  const distinct = rawNode(g, 'Unique', [flatIds], 'int64', [U], { sorted: attr.int(1) }); // [U]
  const oneHot = g.cast(g.equal(g.unsqueeze(distinct, [1]), g.unsqueeze(flatIds, [0])), 'float32'); // [U, N]
  const rows = rawNode(g, 'Flatten', [updates], 'float32', [N, R], { axis: attr.int(q) }); // [N, R]
  const summed = g.matMul(oneHot, rows); // [U, R]
  const rank = g.shape(zeros).length;
  const shape = g.concat([g.shapeOf(distinct), g.slice(g.shapeOf(zeros), [1], [rank], [0])], 0); // [U, rest…]
  const shaped = rawNode(g, 'Reshape', [summed, shape], 'float32', [U, ...g.shape(zeros).slice(1)]);
  return rawNode(g, 'ScatterND', [zeros, g.unsqueeze(distinct, [-1]), shaped], 'float32', g.shape(zeros));
}

/** Gather(data, indices, axis): the rows of ∂y summed into zeros shaped like data (axis moved first). */
const gather: VjpRule = (g, node, gradients) => {
  const data = input(node, 0);
  const dataShape = g.shape(data);
  const rank = dataShape.length;
  const q = g.shape(input(node, 1)).length;
  const axis = normaliseAxis(intAttribute(node, 'axis', 0), rank);
  const indices = wrappedIndices(g, input(node, 1), sizeOnAxis(g, data, axis)); // [...]
  if (axis === 0) return [scatterAddRows(g, zerosLike(g, data), indices, gradientOf(gradients), q), undefined];
  const permData = [axis, ...Array.from({ length: rank }, (_, i) => i).filter((i) => i !== axis)];
  const gradientRank = rank - 1 + q;
  const permGradient = [
    ...Array.from({ length: q }, (_, i) => axis + i),
    ...Array.from({ length: axis }, (_, i) => i),
    ...Array.from({ length: gradientRank - axis - q }, (_, i) => axis + q + i),
  ];
  const movedShape = permData.map((p) => at(dataShape, p, 'Gather data shape'));
  const zeros = rawNode(
    g,
    'ConstantOfShape',
    [rawNode(g, 'Gather', [g.shapeOf(data), g.int64s(permData)], 'int64', [rank], { axis: attr.int(0) })],
    'float32',
    movedShape,
  );
  const scattered = scatterAddRows(g, zeros, indices, g.transpose(gradientOf(gradients), permGradient), q);
  const inverse = new Array<number>(rank);
  permData.forEach((p, i) => {
    inverse[p] = i;
  });
  return [g.transpose(scattered, inverse), undefined];
};

const gatherElements: VjpRule = (g, node, gradients) => {
  const data = input(node, 0);
  const axis = normaliseAxis(intAttribute(node, 'axis', 0), g.shape(data).length);
  const indices = wrappedIndices(g, input(node, 1), sizeOnAxis(g, data, axis));
  const attributes = { axis: attr.int(axis), reduction: attr.string('add') };
  return [
    rawNode(
      g,
      'ScatterElements',
      [zerosLike(g, data), indices, gradientOf(gradients)],
      'float32',
      g.shape(data),
      attributes,
    ),
    undefined,
  ];
};

export const shapeRules: Readonly<Record<string, VjpRule>> = {
  Reshape: reshaped,
  Squeeze: reshaped,
  Unsqueeze: reshaped,
  Flatten: reshaped,
  Transpose: transpose,
  Expand: expand,
  Slice: slice,
  Concat: concat,
  Split: split,
  Gather: gather,
  GatherElements: gatherElements,
};
