/**
 * Reverse-mode automatic differentiation over the ONNX graph IR (graph.ts): the backward nodes
 * are appended to the same graph, so one onnxruntime session computes the loss and its gradients.
 *
 *   const g = new GraphBuilder();
 *   const x = g.graph.input('x', 'float32', [3, 4]);
 *   const loss = g.reduceSum(g.mul(x, x), [0, 1], false);             // Σ x²
 *   const [dx] = addGradients(g, loss, [x]);                          // 2x
 *   g.graph.output(dx!, 'grad.x');
 *
 * The pass walks `graph.nodes` backwards (they are stored in topological order) and, for every
 * node that lies between a differentiated value and the loss, emits its vector-Jacobian product
 * (vjp-rules.ts, vjp-shape-rules.ts): ∂loss/∂input = VJP(node, ∂loss/∂outputs). A value read by
 * several nodes sums its contributions. Only float32 values carry gradients: integer and bool
 * values (token ids, shapes, masks) never do, and frozen tensors — initializers and inputs not
 * differentiated — get no gradient nodes at all (nothing upstream of them is walked). A value made
 * by `GraphBuilder.stopGradient` is a constant to this pass (`torch.Tensor.detach`).
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { GraphNode, ValueId } from './graph.ts';
import type { GraphBuilder } from './ops.ts';
import { zerosLike } from './vjp-helpers.ts';
import { elementwiseRules } from './vjp-rules.ts';
import { shapeRules } from './vjp-shape-rules.ts';

/** ∂loss/∂output per node output (undefined: the output does not reach the loss). */
export type OutputGradients = readonly (ValueId | undefined)[];

/**
 * A vector-Jacobian product: given the node and its outputs' gradients, the gradients of its
 * inputs (undefined where an input needs none). `needs[i]` says which inputs want one.
 */
export type VjpRule = (
  g: GraphBuilder,
  node: GraphNode,
  outputGradients: OutputGradients,
  needs: readonly boolean[],
) => (ValueId | undefined)[];

const rules: Readonly<Record<string, VjpRule>> = { ...elementwiseRules, ...shapeRules };

/** Ops whose outputs are never differentiable (integer, bool or shape results). */
const nonDifferentiable = new Set([
  'Shape',
  'Size',
  'Equal',
  'Less',
  'Greater',
  'LessOrEqual',
  'GreaterOrEqual',
  'Not',
  'And',
  'Or',
  'ArgMax',
  'ArgMin',
  'ConstantOfShape',
  'Range',
]);

export function differentiableOps(): string[] {
  return Object.keys(rules).sort();
}

/** Values that depend on `wrt` through float32 data flow. */
function dependsOnParameters(g: GraphBuilder, wrt: readonly ValueId[]): boolean[] {
  const depends = new Array<boolean>(g.graph.values.length).fill(false);
  for (const id of wrt) depends[id] = true;
  for (const node of g.graph.nodes) {
    if (nonDifferentiable.has(node.op)) continue;
    if (!node.inputs.some((input) => depends[input])) continue;
    for (const output of node.outputs)
      depends[output] = g.dtype(output) === 'float32' && !g.graph.gradientStops.has(output);
  }
  return depends;
}

/** Nodes (indices) whose outputs the loss reads, directly or not. */
function nodesReachingLoss(g: GraphBuilder, loss: ValueId, end: number): boolean[] {
  const reaches = new Array<boolean>(g.graph.values.length).fill(false);
  reaches[loss] = true;
  const onPath = new Array<boolean>(end).fill(false);
  for (let index = end - 1; index >= 0; index--) {
    const node = at(g.graph.nodes, index, 'graph nodes');
    if (!node.outputs.some((output) => reaches[output])) continue;
    onPath[index] = true;
    for (const input of node.inputs) reaches[input] = true;
  }
  return onPath;
}

/**
 * Appends the backward pass of `loss` (a float32 scalar, or a tensor of one element) to the graph;
 * returns ∂loss/∂w for each of `wrt`, in order (zeros for one the loss does not read).
 */
export function addGradients(g: GraphBuilder, loss: ValueId, wrt: readonly ValueId[]): ValueId[] {
  const lossInfo = g.graph.info(loss);
  if (lossInfo.dtype !== 'float32' || !lossInfo.shape.every((d) => d === 1)) {
    throw new InvalidArgumentError(
      `addGradients: the loss must be a float32 scalar, got ${lossInfo.dtype} [${lossInfo.shape}]`,
    );
  }
  for (const id of wrt) {
    if (g.dtype(id) !== 'float32')
      throw new InvalidArgumentError(
        `addGradients: cannot differentiate ${g.graph.info(id).name}, a ${g.dtype(id)} value; only float32 values have gradients`,
      );
  }
  const forwardEnd = g.graph.nodes.length;
  const depends = dependsOnParameters(g, wrt);
  const onPath = nodesReachingLoss(g, loss, forwardEnd);
  const gradients = new Map<ValueId, ValueId>();
  const accumulate = (id: ValueId, gradient: ValueId) => {
    const existing = gradients.get(id);
    gradients.set(id, existing === undefined ? gradient : g.add(existing, gradient));
  };
  accumulate(loss, g.floats([1], lossInfo.shape as number[]));
  for (let index = forwardEnd - 1; index >= 0; index--) {
    if (!onPath[index]) continue;
    const node = at(g.graph.nodes, index, 'graph nodes');
    const needs = node.inputs.map((input) => at(depends, input) && g.dtype(input) === 'float32');
    if (!needs.some(Boolean)) continue;
    const outputGradients = node.outputs.map((output) => gradients.get(output));
    if (outputGradients.every((gradient) => gradient === undefined)) continue;
    const rule = rules[node.op];
    if (rule === undefined || node.domain !== '') {
      throw new InvalidArgumentError(
        `addGradients: no gradient rule for ${node.domain === '' ? '' : `${node.domain}.`}${node.op}; differentiable ops: ${differentiableOps().join(', ')}`,
      );
    }
    const inputGradients = rule(g, node, outputGradients, needs);
    node.inputs.forEach((input, i) => {
      const gradient = inputGradients[i];
      if (needs[i] && gradient !== undefined) accumulate(input, gradient);
    });
  }
  return wrt.map((id) => gradients.get(id) ?? zerosLike(g, id));
}
