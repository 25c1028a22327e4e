/**
 * The Tinker messages the SDK sends and reads as protobuf (`application/x-protobuf`), from the
 * `tinker_public.proto` schema of the `tinker` SDK 0.38.0 (tinker/proto/tinker_public_pb2.py;
 * request_conv.py / response_conv.py for the packing): `ForwardBackwardRequest` (sent to
 * `/api/v1/forward_backward`, `forward_only` for a forward pass), and the future results
 * `SampleResponse` and `ForwardBackwardOutput` (read when the server answers protobuf).
 *
 * Field numbers (proto3):
 *   ForwardBackwardRequest { 1 model_id, 2 seq_id int32, 3 data Datum*, 4 loss_fn,
 *     5 loss_fn_config map<string,double>, 6 forward_only bool, 7 loss_fn_config_v2 map<string,LossConfigValue> }
 *   Datum { 1 model_input Chunk*, 2 loss_fn_inputs map<string,Tensor> }   Chunk { 1 encoded_text { 1 tokens: int32 LE bytes } }
 *   Tensor { 1 dense bytes (oneof), 3 dtype (FLOAT32 1, INT64 2), 4 shape int64* }   LossConfigValue { 1 number double | 2 text }
 *   SampleResponse { 1 sequences SampledSequence*, 2 prompt_logprobs float32 LE (NaN = none), 4 prompt_cache_hit_tokens }
 *   SampledSequence { 1 stop_reason (STOP 0, LENGTH 1), 2 tokens int32 LE, 3 logprobs float32 LE }
 *   ForwardBackwardOutput { 1 loss_fn_output_type, 2 loss_fn_outputs ArrayRecord*, 3 metrics map<string,double> }
 *   ArrayRecord { 1 type_tag, 2 fields map<string,BatchedTensor>, 3 num_datums }
 *   BatchedTensor { 1 data, 2 offsets (int64 LE byte offsets, N+1), 3 dtype (… INT32 3, BFLOAT16 4), 4 trailing_shape }
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { type ProtoField, ProtoWriter, littleEndian, packLittleEndian, readFields } from './protobuf-wire.ts';
import type { Datum, TensorData } from './wire.ts';

const DTYPE_FLOAT32 = 1;
const DTYPE_INT64 = 2;
const DTYPE_INT32 = 3;
const DTYPE_BFLOAT16 = 4;

export interface ForwardBackwardProtoRequest {
  modelId: string;
  seqId: number;
  data: readonly Datum[];
  lossFunction: string;
  lossConfig?: Record<string, number | string>;
  forwardOnly: boolean;
}

function writeTensor(writer: ProtoWriter, tensor: TensorData): void {
  writer.bytes(1, packLittleEndian(tensor.data, tensor.dtype === 'int64' ? 'int64' : 'float32'), true);
  writer.int(3, tensor.dtype === 'int64' ? DTYPE_INT64 : DTYPE_FLOAT32);
  writer.packedInts(4, tensor.shape);
}

/** The request body, byte for byte what the SDK's `forward_backward_request_to_proto` writes (map order aside). */
export function encodeForwardBackward(request: ForwardBackwardProtoRequest): Uint8Array {
  const writer = new ProtoWriter();
  writer.string(1, request.modelId);
  writer.int(2, request.seqId);
  for (const datum of request.data) {
    writer.message(3, (datumWriter) => {
      for (const chunk of datum.model_input.chunks)
        datumWriter.message(1, (chunkWriter) =>
          chunkWriter.message(1, (text) => text.bytes(1, packLittleEndian(chunk.tokens, 'int32'))),
        );
      for (const [name, tensor] of Object.entries(datum.loss_fn_inputs))
        datumWriter.message(2, (entry) => entry.string(1, name).message(2, (value) => writeTensor(value, tensor)));
    });
  }
  writer.string(4, request.lossFunction);
  const config = Object.entries(request.lossConfig ?? {});
  for (const [key, value] of config)
    if (typeof value === 'number') writer.message(5, (entry) => entry.string(1, key).double(2, value));
  writer.bool(6, request.forwardOnly);
  for (const [key, value] of config)
    writer.message(7, (entry) =>
      entry
        .string(1, key)
        .message(2, (inner) => (typeof value === 'number' ? inner.double(1, value) : inner.string(2, value))),
    );
  return writer.finish();
}

const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes ?? new Uint8Array());
const fieldsOf = (fields: ProtoField[], number: number): ProtoField[] => fields.filter((f) => f.number === number);
const lastOf = (fields: ProtoField[], number: number): ProtoField | undefined => fieldsOf(fields, number).at(-1);
const double = (bytes: Uint8Array | undefined): number =>
  bytes === undefined ? 0 : (littleEndian(bytes, 'float64')[0] ?? 0);

function mapEntries(fields: ProtoField[], number: number): [string, Uint8Array | undefined][] {
  return fieldsOf(fields, number).map((entry) => {
    const inner = readFields(entry.bytes ?? new Uint8Array());
    return [text(lastOf(inner, 1)?.bytes), lastOf(inner, 2)?.bytes];
  });
}

export interface DecodedSequence {
  tokens: number[];
  logprobs: number[] | null;
  stop_reason: 'stop' | 'length';
}

/** A protobuf `SampleResponse` in the JSON answer's shape (`prompt_logprobs` NaN → null). */
export function decodeSampleResponse(bytes: Uint8Array): {
  sequences: DecodedSequence[];
  prompt_logprobs: (number | null)[] | null;
  prompt_cache_hit_tokens: number;
} {
  const fields = readFields(bytes);
  const sequences = fieldsOf(fields, 1).map((field): DecodedSequence => {
    const inner = readFields(field.bytes ?? new Uint8Array());
    const logprobs = lastOf(inner, 3)?.bytes;
    return {
      stop_reason: Number(lastOf(inner, 1)?.varint ?? 0n) === 1 ? 'length' : 'stop',
      tokens: littleEndian(lastOf(inner, 2)?.bytes ?? new Uint8Array(), 'int32'),
      logprobs: logprobs === undefined || logprobs.length === 0 ? null : littleEndian(logprobs, 'float32'),
    };
  });
  const prompt = lastOf(fields, 2)?.bytes;
  return {
    sequences,
    prompt_logprobs:
      prompt === undefined || prompt.length === 0
        ? null
        : littleEndian(prompt, 'float32').map((value) => (Number.isNaN(value) ? null : value)),
    prompt_cache_hit_tokens: Number(lastOf(fields, 4)?.varint ?? 0n),
  };
}

function batchedTensorPerDatum(bytes: Uint8Array): { values: number[][]; dtype: 'float32' | 'int64' } {
  const fields = readFields(bytes);
  const dtype = Number(lastOf(fields, 3)?.varint ?? 0n);
  const data = lastOf(fields, 1)?.bytes ?? new Uint8Array();
  const offsets = littleEndian(lastOf(fields, 2)?.bytes ?? new Uint8Array(), 'int64');
  let flat: number[];
  let itemSize: number;
  if (dtype === DTYPE_FLOAT32) [flat, itemSize] = [littleEndian(data, 'float32'), 4];
  else if (dtype === DTYPE_INT64) [flat, itemSize] = [littleEndian(data, 'int64'), 8];
  else if (dtype === DTYPE_INT32) [flat, itemSize] = [littleEndian(data, 'int32'), 4];
  else if (dtype === DTYPE_BFLOAT16) {
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    const widened = new DataView(new ArrayBuffer(4));
    flat = [];
    for (let offset = 0; offset + 1 < data.length; offset += 2) {
      widened.setUint32(0, view.getUint16(offset, true) << 16, true);
      flat.push(widened.getFloat32(0, true));
    }
    itemSize = 2;
  } else throw new InvalidArgumentError(`unsupported BatchedTensor dtype ${dtype}`, { dtype });
  const values: number[][] = [];
  for (let index = 0; index + 1 < offsets.length; index++)
    values.push(flat.slice((offsets[index] ?? 0) / itemSize, (offsets[index + 1] ?? 0) / itemSize));
  return { values, dtype: dtype === DTYPE_INT64 || dtype === DTYPE_INT32 ? 'int64' : 'float32' };
}

/** A protobuf `ForwardBackwardOutput` in the JSON answer's shape: `{ loss_fn_outputs: [{ name: { data } }], metrics }`. */
export function decodeForwardBackwardOutput(bytes: Uint8Array): {
  loss_fn_output_type: string;
  loss_fn_outputs: Record<string, { data: number[]; dtype: 'float32' | 'int64' }>[];
  metrics: Record<string, number>;
} {
  const fields = readFields(bytes);
  const outputs: Record<string, { data: number[]; dtype: 'float32' | 'int64' }>[] = [];
  for (const record of fieldsOf(fields, 2)) {
    const inner = readFields(record.bytes ?? new Uint8Array());
    const count = Number(lastOf(inner, 3)?.varint ?? 0n);
    const perField = mapEntries(inner, 2).map(([name, value]) => ({
      name,
      ...batchedTensorPerDatum(value ?? new Uint8Array()),
    }));
    const datums = count > 0 ? count : (perField[0]?.values.length ?? 0);
    for (let index = 0; index < datums; index++) {
      const datum: Record<string, { data: number[]; dtype: 'float32' | 'int64' }> = {};
      for (const field of perField) datum[field.name] = { data: field.values[index] ?? [], dtype: field.dtype };
      outputs.push(datum);
    }
  }
  const metrics: Record<string, number> = {};
  for (const [key, value] of mapEntries(fields, 3)) metrics[key] = double(value);
  const type = text(lastOf(fields, 1)?.bytes);
  return { loss_fn_output_type: type.split(':').at(-1) ?? type, loss_fn_outputs: outputs, metrics };
}
