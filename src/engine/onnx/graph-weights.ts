/**
 * The base weights a model graph (model-graph.ts) holds: as initializers (inference: ORT pre-packs
 * them) or as inputs (training: fed per run), in float32 or in 4 / 8-bit blocks (matmul-nbits.ts).
 *
 * Inference graphs join the projections that read the same input into one matmul — q, k and v of
 * a block, gate and up — and split the product: two matmuls where there were five, and fewer nodes
 * a decode step. A column of the joined product is the same dot product over K as in its own
 * matmul (MLAS sums K in the same order whatever N; checked bit for bit in graph-weights.test.ts).
 * Nothing is copied to join them: the float32 initializer is the members' column blocks, written
 * row by row by the serialiser (graph.ts ColumnBlocks), and the 4 / 8-bit codes, which run along K
 * per output column, are the members' codes one after the other. Training graphs keep them apart:
 * their weights are inputs, differentiated one by one.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { parameterShapes, type HostParams, type HostTensor, type ModelConfig } from '../../model/config.ts';
import { ColumnBlocks, type TensorData, type ValueId } from './graph.ts';
import { quantizeBase, type BaseQuantization, type NBitsWeight } from './matmul-nbits.ts';
import type { GraphBuilder } from './ops.ts';

/** The projections of a block that read one input, joined in inference graphs. */
export const JOINED_PROJECTIONS = [
  ['wq', 'wk', 'wv'],
  ['wGate', 'wUp'],
] as const;

/** The joined weight of layer `layer`'s projections `group`: `layers.{i}.wq+wk+wv`. */
export const joinedName = (layer: number, group: readonly string[]): string => `layers.${layer}.${group.join('+')}`;

/** Each joined weight's name and its members' config.ts names, layer by layer. */
function joinedGroups(config: ModelConfig): { name: string; members: string[] }[] {
  return Array.from({ length: config.numLayers }, (_, layer) =>
    JOINED_PROJECTIONS.map((group) => ({
      name: joinedName(layer, group),
      members: group.map((w) => `layers.${layer}.${w}`),
    })),
  ).flat();
}

/** Names and shapes of the weights an inference graph holds: parameterShapes with each group joined [D, ΣN]. */
export function joinedShapes(config: ModelConfig): Map<string, number[]> {
  const shapes = parameterShapes(config);
  for (const { name, members } of joinedGroups(config)) {
    const memberShapes = members.map((member) => shapes.get(member) ?? []);
    for (const member of members) shapes.delete(member);
    const columns = memberShapes.reduce((sum, shape) => sum + at(shape, 1, 'projection shape'), 0);
    shapes.set(name, [at(at(memberShapes, 0, 'group'), 0, 'projection shape'), columns]);
  }
  return shapes;
}

function paramOf(params: HostParams, name: string): HostTensor {
  const tensor = params.get(name);
  if (tensor === undefined)
    throw new InvalidArgumentError(`model graph: no weight ${name} in params (or build with weights: 'inputs')`, {
      name,
    });
  return tensor;
}

/** The data of every weight joinedShapes names: joined ones as their members' column blocks. */
export function joinedData(config: ModelConfig, params: HostParams): Map<string, TensorData> {
  const data = new Map<string, TensorData>();
  const groups = joinedGroups(config);
  const joined = new Set(groups.flatMap(({ members }) => members));
  for (const { name, members } of groups) {
    const tensors = members.map((member) => paramOf(params, member));
    const rows = at(at(tensors, 0, 'group').shape, 0, 'projection shape');
    data.set(
      name,
      new ColumnBlocks(
        tensors.map((t) => t.data),
        rows,
      ),
    );
  }
  for (const name of parameterShapes(config).keys()) if (!joined.has(name)) data.set(name, paramOf(params, name).data);
  return data;
}

/** Quantized projections with each group's members replaced by one weight: their codes side by side. */
function joinQuantized(config: ModelConfig, quantized: Map<string, NBitsWeight>): Map<string, NBitsWeight> {
  const out = new Map(quantized);
  for (const { name, members } of joinedGroups(config)) {
    const parts = members.map((member) => quantized.get(member));
    if (parts.some((part) => part === undefined)) continue;
    const weights = parts as NBitsWeight[];
    const join = <T extends Uint8Array | Float32Array>(pick: (w: NBitsWeight) => T, make: (n: number) => T): T => {
      const joinedArray = make(weights.reduce((sum, w) => sum + pick(w).length, 0));
      let offset = 0;
      for (const w of weights) {
        joinedArray.set(pick(w), offset);
        offset += pick(w).length;
      }
      return joinedArray;
    };
    const first = at(weights, 0, 'group');
    for (const member of members) out.delete(member);
    out.set(name, {
      K: first.K,
      N: weights.reduce((sum, w) => sum + w.N, 0),
      bits: first.bits,
      packed: join(
        (w) => w.packed,
        (n) => new Uint8Array(n),
      ),
      scales: join(
        (w) => w.scales,
        (n) => new Float32Array(n),
      ),
      zeroPoints: join(
        (w) => w.zeroPoints,
        (n) => new Uint8Array(n),
      ),
    });
  }
  return out;
}

export interface GraphWeights {
  /** The float32 weights by name (config.ts names; joinedName for joined projections). */
  values: Map<string, ValueId>;
  /** Under a quantized base: the projections (joined) and the head as 'head'; else null. */
  quantized: Map<string, NBitsWeight> | null;
}

/** The weights as inputs (config.ts names, apart) or as initializers (projections joined, maybe quantized). */
export function graphWeights(
  g: GraphBuilder,
  config: ModelConfig,
  {
    params,
    weights = 'initializers',
    baseQuantization = 'float32',
  }: { params?: HostParams; weights?: 'initializers' | 'inputs'; baseQuantization?: BaseQuantization },
): GraphWeights {
  const values = new Map<string, ValueId>();
  if (weights === 'inputs' || params === undefined) {
    if (baseQuantization !== 'float32')
      throw new InvalidArgumentError('model graph: a quantized base needs the weights as initializers (params)');
    if (weights !== 'inputs')
      throw new InvalidArgumentError("model graph: no params (or build with weights: 'inputs')");
    for (const [name, shape] of parameterShapes(config)) values.set(name, g.graph.input(name, 'float32', shape));
    return { values, quantized: null };
  }
  const quantized =
    baseQuantization === 'float32'
      ? null
      : joinQuantized(config, quantizeBase(config, params, baseQuantization === 'int4' ? 4 : 8));
  const data = joinedData(config, params);
  for (const [name, shape] of joinedShapes(config)) {
    if (quantized?.has(name) || (name === 'lmHead' && quantized?.has('head'))) continue;
    const tensor = data.get(name);
    if (tensor === undefined) throw new InvalidArgumentError(`model graph: no data for weight ${name}`, { name });
    values.set(name, g.graph.initializer(name, { dtype: 'float32', shape, data: tensor }));
  }
  return { values, quantized };
}
