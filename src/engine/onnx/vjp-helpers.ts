/**
 * Small graph-building helpers the gradient rules share: un-broadcasting a gradient back to an
 * input's shape, zeros and reshapes that follow a value's run-time shape, constant inputs read
 * back from initializers, and raw nodes for ops GraphBuilder has no helper for.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { OutputGradients } from './autodiff.ts';
import { attr, type Attribute, type DataType, type GraphNode, type Shape, type ValueId } from './graph.ts';
import type { GraphBuilder } from './ops.ts';

/** One node with one output of the given dtype and shape. */
export function rawNode(
  g: GraphBuilder,
  op: string,
  inputs: readonly ValueId[],
  dtype: DataType,
  shape: Shape,
  attributes: Record<string, Attribute> = {},
): ValueId {
  return at(g.graph.node(op, inputs, attributes, [{ dtype, shape }]), 0);
}

/** The node's input `i`. */
export const input = (node: GraphNode, i: number): ValueId => at(node.inputs, i, 'node inputs');

/** The node's (first) output. */
export const output = (node: GraphNode): ValueId => at(node.outputs, 0, 'node outputs');

/** ∂loss/∂y of a one-output node (autodiff runs a rule only when an output gradient is set). */
export function gradientOf(gradients: OutputGradients): ValueId {
  const gradient = gradients[0];
  if (gradient === undefined)
    throw new InvalidArgumentError("a one-output node's gradient rule ran without the gradient of its output");
  return gradient;
}

export function normaliseAxis(axis: number, rank: number): number {
  return axis < 0 ? axis + rank : axis;
}

/** Zeros with x's run-time shape (float32: ConstantOfShape's default value). */
export function zerosLike(g: GraphBuilder, x: ValueId): ValueId {
  return rawNode(g, 'ConstantOfShape', [g.shapeOf(x)], 'float32', g.shape(x));
}

/** `gradient` reshaped to x's run-time shape (the backward of Reshape, Squeeze, Unsqueeze, Flatten). */
export function reshapeLike(g: GraphBuilder, gradient: ValueId, x: ValueId): ValueId {
  return rawNode(g, 'Reshape', [gradient, g.shapeOf(x)], g.dtype(gradient), g.shape(x));
}

/** `gradient` expanded to x's run-time shape (the backward of a reduction). */
export function expandLike(g: GraphBuilder, gradient: ValueId, x: ValueId): ValueId {
  return rawNode(g, 'Expand', [gradient, g.shapeOf(x)], g.dtype(gradient), g.shape(x));
}

/**
 * Sums a gradient of the broadcast shape `from` back to an input of shape `to` (numpy rules):
 * the leading axes `to` lacks are summed away, and so are the axes where `to` has size 1 and
 * `from` does not. Sizes are compared as the shape inference wrote them: a symbolic size is taken
 * to equal the size it met (a symbolic size that is 1 at run time and broadcasts is not supported).
 */
export function sumToShape(g: GraphBuilder, gradient: ValueId, to: Shape): ValueId {
  const from = g.shape(gradient);
  if (from.length < to.length)
    throw new InvalidArgumentError(`gradient of shape [${from}] cannot sum to the larger rank of [${to}]`);
  let result = gradient;
  const extra = from.length - to.length;
  if (extra > 0)
    result = g.reduceSum(
      result,
      Array.from({ length: extra }, (_, i) => i),
      false,
    );
  const ones = to.flatMap((d, i) => (d === 1 && from[extra + i] !== 1 ? [i] : []));
  if (ones.length > 0) result = g.reduceSum(result, ones, true);
  return result;
}

/** The gradient of a broadcasting elementwise input: un-broadcast to the input's shape. */
export function forInput(g: GraphBuilder, gradient: ValueId, input: ValueId): ValueId {
  return sumToShape(g, gradient, g.shape(input));
}

/** The constant integer vector held by an initializer input (axes, perms), or an error naming the op. */
export function constantInts(g: GraphBuilder, node: GraphNode, inputIndex: number): number[] | undefined {
  const id = node.inputs[inputIndex];
  if (id === undefined) return undefined;
  const tensor = g.graph.initializers.get(id);
  if (tensor === undefined)
    throw new InvalidArgumentError(
      `gradient of ${node.op}: input ${inputIndex} must be a constant (an initializer), not a value computed at run time`,
    );
  return Array.from(tensor.data as ArrayLike<number | bigint>, (v) => Number(v));
}

export function intAttribute(node: GraphNode, name: string, fallback: number): number {
  const attribute = node.attributes[name];
  return attribute?.kind === 'int' ? attribute.value : fallback;
}

export function intsAttribute(node: GraphNode, name: string): readonly number[] | undefined {
  const attribute = node.attributes[name];
  return attribute?.kind === 'ints' ? attribute.value : undefined;
}

export function floatAttribute(node: GraphNode, name: string, fallback: number): number {
  const attribute = node.attributes[name];
  return attribute?.kind === 'float' ? attribute.value : fallback;
}

/** An int64 [1] holding x's size on `axis` at run time. */
export function sizeOnAxis(g: GraphBuilder, x: ValueId, axis: number): ValueId {
  return rawNode(g, 'Gather', [g.shapeOf(x), g.int64s([axis])], 'int64', [1], { axis: attr.int(0) });
}

/** The axes a reduction node reduces, normalised, in the rank of its input. */
export function reducedAxes(g: GraphBuilder, node: GraphNode): number[] {
  const rank = g.shape(input(node, 0)).length;
  const axes = node.op === 'ReduceSum' ? constantInts(g, node, 1) : intsAttribute(node, 'axes');
  if (axes === undefined || axes.length === 0) return Array.from({ length: rank }, (_, i) => i);
  return axes.map((a) => normaliseAxis(a, rank)).sort((p, q) => p - q);
}

/** A reduction's output gradient with the reduced axes put back as size 1 (when keepdims was 0). */
export function keptDims(g: GraphBuilder, node: GraphNode, gradient: ValueId): ValueId {
  if (intAttribute(node, 'keepdims', 1) === 1) return gradient;
  return g.unsqueeze(gradient, reducedAxes(g, node));
}
