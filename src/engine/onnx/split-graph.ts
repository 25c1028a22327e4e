/**
 * Splits a forward + backward graph in two ORT graphs at the boundary autodiff appended at, so a
 * train step runs the forward once: its run returns the scored heads (which a loss reads first)
 * and the activations the backward nodes read; the backward run takes them back as inputs.
 *
 *   forward graph:  nodes [0, boundary) + the integer-valued backward nodes (Shape, Size, index
 *                   arithmetic) that read only forward values, hoisted so that a tensor read
 *                   only for its shape never crosses over
 *   backward graph: the rest; inputs = the original inputs it reads + the transferred values
 *
 * Inputs made after the boundary (the cotangents) feed the backward graph only. Initializers are
 * shared by reference (each graph serialises the ones it reads).
 *
 * Rematerialisation: a forward node of one pass over its inputs (elementwise, reshaping, slicing;
 * `recomputedOps`) whose inputs cross anyway (or are graph inputs) is run again in the backward
 * graph instead of carrying its output across: on SmolLM2's shape that keeps SwiGLU's gate and up
 * but not sigmoid(gate), silu(gate) and their product, an RMSNorm's input but not its normalised
 * output, the softmax weights but not their slice — the same numbers (the same ops on the same
 * inputs), half the bytes held between the runs.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { Graph, type Tensor, type ValueId } from './graph.ts';

/** Ops a backward graph runs again rather than carry their output (one pass over the inputs). */
const recomputedOps = new Set([
  'Add',
  'Sub',
  'Mul',
  'Div',
  'Neg',
  'Sigmoid',
  'Sqrt',
  'Reciprocal',
  'Exp',
  'Cast',
  'Identity',
  'Reshape',
  'Transpose',
  'Squeeze',
  'Unsqueeze',
  'Slice',
  'Concat',
  'Expand',
  'Where',
]);

export interface SplitGraphs {
  forward: Graph;
  backward: Graph;
  /** Names of the forward graph's outputs that the backward graph takes as inputs. */
  transferred: string[];
}

/** A new graph holding `nodes` of `source`, with `inputs` as its inputs and `outputs` as its outputs (names kept). */
function extract(
  source: Graph,
  nodes: readonly number[],
  inputs: readonly ValueId[],
  outputs: readonly ValueId[],
): Graph {
  const { '': opset, ...extraOpsets } = source.opsets;
  const graph = new Graph({ opset, extraOpsets });
  const mapped = new Map<ValueId, ValueId>();
  for (const id of inputs) {
    const info = source.info(id);
    mapped.set(id, graph.input(info.name, info.dtype, info.shape));
  }
  const mappedValue = (id: ValueId): ValueId => {
    let target = mapped.get(id);
    if (target === undefined) {
      const tensor = source.initializers.get(id) as Tensor | undefined;
      if (tensor === undefined)
        throw new InvalidArgumentError(
          `split graph: ${source.info(id).name} is neither an input, an initializer nor computed before its use`,
        );
      target = graph.initializer(source.info(id).name, tensor);
      mapped.set(id, target);
    }
    return target;
  };
  for (const index of nodes) {
    const node = at(source.nodes, index, 'graph nodes');
    const ins = node.inputs.map(mappedValue);
    const outs = graph.node(
      node.op,
      ins,
      { ...node.attributes },
      node.outputs.map((id) => ({ ...source.info(id) })),
      node.domain,
    );
    node.outputs.forEach((id, i) => {
      mapped.set(id, at(outs, i));
    });
  }
  for (const id of outputs) graph.output(mappedValue(id));
  return graph;
}

/**
 * The forward nodes the backward graph runs again (in forward order) and the values they make.
 * Candidates: nodes of `recomputedOps` whose inputs cross anyway (the backward reads them, graph
 * inputs, initializers, integers) or are made by candidates; chosen: the candidates that make,
 * directly or through other chosen ones, a value the backward reads. So nothing crosses that did
 * not before, and each chosen node's output stops crossing.
 */
function recomputedNodes(
  source: Graph,
  forwardNodes: readonly number[],
  readByBackward: ReadonlySet<ValueId>,
  availableForward: (id: ValueId) => boolean,
): { nodes: number[]; values: Set<ValueId> } {
  const derivable = new Set<ValueId>();
  const crosses = (id: ValueId) =>
    derivable.has(id) ||
    source.initializers.has(id) ||
    (availableForward(id) &&
      (readByBackward.has(id) || source.info(id).producer === 'input' || source.info(id).dtype !== 'float32'));
  const candidates = forwardNodes.filter((index) => {
    const node = at(source.nodes, index, 'graph nodes');
    if (node.domain !== '' || !recomputedOps.has(node.op) || !node.inputs.every(crosses)) return false;
    for (const id of node.outputs) derivable.add(id);
    return true;
  });
  const needed = new Set(readByBackward);
  const nodes: number[] = [];
  const values = new Set<ValueId>();
  for (const index of candidates.reverse()) {
    const node = at(source.nodes, index, 'graph nodes');
    if (!node.outputs.some((id) => needed.has(id))) continue;
    nodes.push(index);
    for (const id of node.outputs) values.add(id);
    for (const id of node.inputs) needed.add(id);
  }
  return { nodes: nodes.reverse(), values };
}

/**
 * `boundary`: nodes before it are the forward; values numbered from `firstBackwardValue` on were
 * made after it (inputs among them feed the backward only).
 */
export function splitGraph(
  source: Graph,
  {
    boundary,
    firstBackwardValue,
    forwardOutputs,
  }: { boundary: number; firstBackwardValue: number; forwardOutputs: readonly ValueId[] },
): SplitGraphs {
  const producedForward = new Array<boolean>(source.values.length).fill(false);
  const availableForward = (id: ValueId) =>
    producedForward[id] ||
    source.initializers.has(id) ||
    (source.info(id).producer === 'input' && id < firstBackwardValue);
  const forwardNodes: number[] = [];
  const backwardNodes: number[] = [];
  source.nodes.forEach((node, index) => {
    const integerOnly = node.outputs.every((id) => source.info(id).dtype !== 'float32');
    if (index < boundary || (integerOnly && node.inputs.every(availableForward))) {
      forwardNodes.push(index);
      for (const id of node.outputs) producedForward[id] = true;
    } else {
      backwardNodes.push(index);
    }
  });
  const readByBackward = new Set<ValueId>();
  for (const index of backwardNodes)
    for (const id of at(source.nodes, index, 'graph nodes').inputs) readByBackward.add(id);
  const recomputed = recomputedNodes(source, forwardNodes, readByBackward, availableForward);
  backwardNodes.unshift(...recomputed.nodes);
  for (const index of recomputed.nodes)
    for (const id of at(source.nodes, index, 'graph nodes').inputs) readByBackward.add(id);
  const transferred = [...readByBackward]
    .filter((id) => producedForward[id] && !recomputed.values.has(id))
    .sort((a, b) => a - b);
  const graphInputs = (ids: Iterable<ValueId>) =>
    [...new Set(ids)].filter((id) => source.info(id).producer === 'input').sort((a, b) => a - b);
  const forwardReads = graphInputs(forwardNodes.flatMap((index) => at(source.nodes, index, 'graph nodes').inputs));
  const backwardReads = graphInputs(readByBackward);
  const forward = extract(source, forwardNodes, forwardReads, [...new Set([...forwardOutputs, ...transferred])]);
  // The source's other forward outputs (logits, keys, values) are dropped: nothing reads them.
  const backwardOutputs = source.outputs.filter((id) => !producedForward[id]);
  const backward = extract(source, backwardNodes, [...backwardReads, ...transferred], backwardOutputs);
  return { forward, backward, transferred: transferred.map((id) => source.info(id).name) };
}

/**
 * The graph unsplit, pruned to what `outputs` need: one run for forward and backward, every
 * activation staying inside onnxruntime (for a loss that does not read the forward's heads
 * first, such as SFT's: its cotangents are known before the run).
 */
export function wholeGraph(source: Graph, outputs: readonly ValueId[]): Graph {
  const needed = new Set(outputs);
  const nodes: number[] = [];
  for (let index = source.nodes.length - 1; index >= 0; index--) {
    const node = at(source.nodes, index, 'graph nodes');
    if (!node.outputs.some((id) => needed.has(id))) continue;
    nodes.push(index);
    for (const id of node.inputs) needed.add(id);
  }
  const inputs = [...needed].filter((id) => source.info(id).producer === 'input').sort((a, b) => a - b);
  return extract(source, nodes.reverse(), inputs, outputs);
}
