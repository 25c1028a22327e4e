/**
 * The IR (graph.ts) as an ONNX ModelProto (https://github.com/onnx/onnx/blob/main/onnx/onnx.proto).
 * Field numbers are those of onnx.proto; only what the IR uses is written. Initializers go out as
 * `raw_data` (little-endian, as the host stores them).
 */
import { ProtoWriter } from './protobuf.ts';
import {
  ColumnBlocks,
  type Attribute,
  type DataType,
  type Graph,
  type Shape,
  type Tensor,
  type ValueId,
} from './graph.ts';

/** ONNX IR version 8 (ONNX 1.10+): read by onnxruntime 1.30, which supports up to 11. */
const IR_VERSION = 8;

/** TensorProto.DataType codes. */
const dataTypeCode: Record<DataType, number> = { float32: 1, int32: 6, int64: 7, bool: 9, uint8: 2 };

/** AttributeProto.AttributeType codes. */
const attributeTypeCode = { float: 1, int: 2, string: 3, floats: 6, ints: 7 } as const;

function encodeShape(shape: Shape): ProtoWriter {
  const writer = new ProtoWriter();
  for (const dim of shape) {
    const d = new ProtoWriter();
    if (typeof dim === 'number')
      d.int(1, dim); // dim_value
    else d.string(2, dim); // dim_param
    writer.message(1, d);
  }
  return writer;
}

function encodeValueInfo(graph: Graph, id: ValueId): ProtoWriter {
  const info = graph.info(id);
  const tensorType = new ProtoWriter().int(1, dataTypeCode[info.dtype]).message(2, encodeShape(info.shape)); // elem_type, shape
  return new ProtoWriter().string(1, info.name).message(2, new ProtoWriter().message(1, tensorType)); // name, type.tensor_type
}

export function encodeTensor(name: string, tensor: Tensor): ProtoWriter {
  const writer = new ProtoWriter();
  if (tensor.shape.length > 0) writer.packedInts(1, tensor.shape); // dims
  writer.int(2, dataTypeCode[tensor.dtype]); // data_type
  writer.string(8, name); // name
  const { data } = tensor;
  if (data instanceof ColumnBlocks)
    writer.byteParts(9, data.rowBytes()); // raw_data
  else writer.bytes(9, new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return writer;
}

function encodeAttribute(name: string, attribute: Attribute): ProtoWriter {
  const writer = new ProtoWriter().string(1, name).int(20, attributeTypeCode[attribute.kind]); // name, type
  switch (attribute.kind) {
    case 'float':
      return writer.float(2, attribute.value); // f
    case 'int':
      return writer.int(3, attribute.value); // i
    case 'string':
      return writer.string(4, attribute.value); // s
    case 'floats':
      return writer.packedFloats(7, attribute.value); // floats
    case 'ints':
      return writer.packedInts(8, attribute.value); // ints
  }
}

function encodeGraph(graph: Graph, name: string): ProtoWriter {
  const writer = new ProtoWriter();
  graph.nodes.forEach((node, index) => {
    const n = new ProtoWriter();
    for (const input of node.inputs) n.string(1, graph.info(input).name);
    for (const output of node.outputs) n.string(2, graph.info(output).name);
    n.string(3, `${node.op}_${index}`).string(4, node.op);
    for (const [key, value] of Object.entries(node.attributes)) n.message(5, encodeAttribute(key, value));
    if (node.domain !== '') n.string(7, node.domain);
    writer.message(1, n);
  });
  writer.string(2, name);
  for (const [id, tensor] of graph.initializers) writer.message(5, encodeTensor(graph.info(id).name, tensor));
  for (const id of graph.inputs) writer.message(11, encodeValueInfo(graph, id));
  for (const id of graph.outputs) writer.message(12, encodeValueInfo(graph, id));
  return writer;
}

/** The serialised model, ready for `InferenceSession.create(bytes)`. */
export function serializeModel(
  graph: Graph,
  { name = 'agentrl', producer = 'agentrl' }: { name?: string; producer?: string } = {},
): Uint8Array {
  const model = new ProtoWriter().int(1, IR_VERSION).string(2, producer);
  model.message(7, encodeGraph(graph, name));
  for (const [domain, version] of Object.entries(graph.opsets)) {
    model.message(8, new ProtoWriter().string(1, domain).int(2, version)); // opset_import
  }
  return model.concat();
}
