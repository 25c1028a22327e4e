/**
 * The ONNX graph IR: an explicit list of nodes over typed, shaped values, built first and
 * serialised last (serialize.ts). It is the one representation every pass reads — the forward
 * model (model-graph.ts) writes it, a reverse-mode autodiff pass can walk it backwards
 * (each node: `op`, `inputs`, `outputs`, `attributes`; each value: `dtype`, `shape`, `producer`).
 *
 *   const graph = new Graph();
 *   const x = graph.input('x', 'float32', ['N', 4]);       // 'N': a symbolic (dynamic) axis
 *   const w = graph.initializer('w', { dtype: 'float32', shape: [4, 3], data });
 *   const [y] = graph.node('MatMul', [x, w], {}, [{ dtype: 'float32', shape: ['N', 3] }]);
 *   graph.output(y!, 'y');
 *
 * Values are numbered (ValueId = index into `values`); names are unique and are what ONNX sees.
 * Shapes are best-effort static: a number is a known size, a string a symbolic size (an input's
 * dim_param, or an expression such as 'B*T' the op helpers derive). Only graph inputs and outputs
 * carry their shapes into the file; ORT infers the rest, so an imprecise symbolic shape inside the
 * graph never reaches the runtime. Op helpers with shape inference live in ops.ts.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';

export type DataType = 'float32' | 'int32' | 'int64' | 'bool' | 'uint8';
/** A size: known (number) or symbolic (string). */
export type Dim = number | string;
export type Shape = readonly Dim[];
export type ValueId = number;

export interface ValueInfo {
  name: string;
  dtype: DataType;
  shape: Shape;
  /** Index of the node that produces it, or how it enters the graph. */
  producer: number | 'input' | 'initializer';
}

export type Attribute =
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'ints'; value: readonly number[] }
  | { kind: 'floats'; value: readonly number[] }
  | { kind: 'string'; value: string };

export interface GraphNode {
  op: string;
  /** '' = the standard ONNX domain; e.g. 'com.microsoft' for ORT's contrib ops. */
  domain: string;
  inputs: readonly ValueId[];
  outputs: readonly ValueId[];
  attributes: Readonly<Record<string, Attribute>>;
}

/**
 * A float32 [rows, ΣN] matrix held as its column blocks [rows, N_i] (graph-weights.ts joins the
 * projections that read one input without copying them): the serialiser writes it row by row.
 */
export class ColumnBlocks {
  /** Each block's column count (its length ÷ rows). */
  readonly widths: readonly number[];

  constructor(
    readonly blocks: readonly Float32Array[],
    readonly rows: number,
  ) {
    this.widths = blocks.map((block, i) => {
      if (!Number.isInteger(rows) || rows < 1 || block.length % rows !== 0)
        throw new InvalidArgumentError(
          `column block ${i} has ${block.length} values, not a whole number of ${rows} rows`,
        );
      return block.length / rows;
    });
  }

  /** Its element count, as a typed array's. */
  get length(): number {
    return this.rows * this.widths.reduce((sum, width) => sum + width, 0);
  }

  /** The matrix's little-endian bytes in row-major order, as views into the blocks. */
  rowBytes(): Uint8Array[] {
    const parts: Uint8Array[] = [];
    for (let row = 0; row < this.rows; row++)
      this.blocks.forEach((block, i) => {
        const width = this.widths[i] ?? 0;
        parts.push(new Uint8Array(block.buffer, block.byteOffset + row * width * 4, width * 4));
      });
    return parts;
  }
}

export type TensorData = Float32Array | Int32Array | BigInt64Array | Uint8Array | ColumnBlocks;

export interface Tensor {
  dtype: DataType;
  shape: readonly number[];
  data: TensorData;
}

/** Attribute constructors: `attr.int(1)`, `attr.ints([0, 2, 1, 3])`, `attr.float(1e-6)`. */
export const attr = {
  int: (value: number): Attribute => ({ kind: 'int', value }),
  float: (value: number): Attribute => ({ kind: 'float', value }),
  ints: (value: readonly number[]): Attribute => ({ kind: 'ints', value }),
  floats: (value: readonly number[]): Attribute => ({ kind: 'floats', value }),
  string: (value: string): Attribute => ({ kind: 'string', value }),
};

export function elementCount(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

export class Graph {
  readonly values: ValueInfo[] = [];
  readonly nodes: GraphNode[] = [];
  readonly inputs: ValueId[] = [];
  readonly outputs: ValueId[] = [];
  readonly initializers = new Map<ValueId, Tensor>();
  /** Values autodiff treats as constants (a stop-gradient: their producer passes no gradient back). */
  readonly gradientStops = new Set<ValueId>();
  /** ONNX opset of the default domain; others per domain (e.g. { 'com.microsoft': 1 }). */
  readonly opsets: Record<string, number>;
  private readonly names = new Set<string>();
  private nextName = 0;

  constructor({ opset = 17, extraOpsets = {} }: { opset?: number; extraOpsets?: Record<string, number> } = {}) {
    this.opsets = { '': opset, ...extraOpsets };
  }

  private addValue(name: string | undefined, dtype: DataType, shape: Shape, producer: ValueInfo['producer']): ValueId {
    const unique = name ?? `v${this.nextName++}`;
    if (this.names.has(unique)) throw new InvalidArgumentError(`graph value name "${unique}" is used twice`);
    this.names.add(unique);
    this.values.push({ name: unique, dtype, shape: [...shape], producer });
    return this.values.length - 1;
  }

  /** A runtime input (fed on every run). */
  input(name: string, dtype: DataType, shape: Shape): ValueId {
    const id = this.addValue(name, dtype, shape, 'input');
    this.inputs.push(id);
    return id;
  }

  /** A constant stored in the model (weights, shape vectors). `data` is referenced, not copied. */
  initializer(name: string | undefined, tensor: Tensor): ValueId {
    if (tensor.data.length !== elementCount(tensor.shape)) {
      throw new InvalidArgumentError(
        `initializer ${name ?? ''} has ${tensor.data.length} values for shape [${tensor.shape}]`,
      );
    }
    const id = this.addValue(name, tensor.dtype, tensor.shape, 'initializer');
    this.initializers.set(id, tensor);
    return id;
  }

  /** Appends a node; returns its output ids (one per `outputs` spec). */
  node(
    op: string,
    inputs: readonly ValueId[],
    attributes: Record<string, Attribute>,
    outputs: readonly { dtype: DataType; shape: Shape; name?: string }[],
    domain = '',
  ): ValueId[] {
    for (const input of inputs) {
      if (!(input >= 0 && input < this.values.length))
        throw new InvalidArgumentError(`${op}: unknown input value ${input}`);
    }
    const index = this.nodes.length;
    const ids = outputs.map((o) => this.addValue(o.name, o.dtype, o.shape, index));
    this.nodes.push({ op, domain, inputs: [...inputs], outputs: ids, attributes });
    return ids;
  }

  /** Marks a value as a graph output (optionally renaming it, e.g. to 'logits'). */
  output(id: ValueId, name?: string): ValueId {
    const value = this.info(id);
    if (name !== undefined && name !== value.name) {
      if (this.names.has(name)) throw new InvalidArgumentError(`graph value name "${name}" is used twice`);
      this.names.delete(value.name);
      this.names.add(name);
      value.name = name;
    }
    this.outputs.push(id);
    return id;
  }

  info(id: ValueId): ValueInfo {
    return at(this.values, id, 'graph values');
  }
}
