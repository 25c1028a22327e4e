/**
 * The safetensors format (https://github.com/huggingface/safetensors):
 *
 *   [8 bytes]  N, unsigned little-endian 64-bit header length
 *   [N bytes]  JSON header: { "__metadata__"?: {string: string},
 *                             name: { dtype, shape, data_offsets: [begin, end] }, … }
 *              padded with spaces so that 8 + N is a multiple of 8 (as the reference writer does)
 *   [rest]     raw little-endian tensor data; offsets are relative to the start of this block
 *
 * Read: F32, F16, BF16 (→ Float32Array), F64 (→ Float64Array), I32 (→ Int32Array),
 * I64 (→ BigInt64Array). Write: F32. Every structural problem is a `CheckpointError` naming the
 * file and, where it applies, the tensor. Files are written by `checkpoint.ts` (atomically).
 */
import { readFile } from 'node:fs/promises';
import { CheckpointError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';

export type SafetensorsDtype = 'F32' | 'F16' | 'BF16' | 'F64' | 'I32' | 'I64';
const dtypeBytes: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2, F64: 8, I32: 4, I64: 8 };
const supportedDtypes = Object.keys(dtypeBytes) as SafetensorsDtype[];

export interface SafeTensor {
  /** The dtype stored in the file. */
  dtype: SafetensorsDtype;
  shape: number[];
  data: Float32Array | Float64Array | Int32Array | BigInt64Array;
}

export interface SafetensorsContent {
  tensors: Map<string, SafeTensor>;
  metadata: Record<string, string>;
}

/** A float32 tensor to write. */
export interface Float32Tensor {
  shape: number[];
  data: Float32Array;
}

const littleEndianHost = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Parses a safetensors file already in memory. `file` is used in error messages. */
export function parseSafetensors(bytes: Uint8Array, { file = '<memory>' }: { file?: string } = {}): SafetensorsContent {
  const fail = (message: string, tensor?: string): never => {
    throw new CheckpointError(`${file}: ${tensor === undefined ? '' : `tensor "${tensor}": `}${message}`, {
      file,
      tensor,
    });
  };
  if (bytes.length < 8) fail(`file is ${bytes.length} bytes, shorter than the 8-byte header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getBigUint64(0, true);
  if (headerLength > BigInt(bytes.length - 8))
    fail(`header length ${headerLength} exceeds the file size ${bytes.length}`);
  const headerEnd = 8 + Number(headerLength);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, headerEnd)));
  } catch (error) {
    fail(`header is not valid UTF-8 JSON (${(error as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) fail('header is not a JSON object');
  const dataStart = headerEnd;
  const dataLength = bytes.length - dataStart;

  const metadata: Record<string, string> = {};
  const spans: { name: string; begin: number; end: number }[] = [];
  const tensors = new Map<string, SafeTensor>();
  for (const [name, entry] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) fail('__metadata__ is not an object');
      for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
        if (typeof value !== 'string') fail(`__metadata__["${key}"] is not a string`);
        metadata[key] = value as string;
      }
      continue;
    }
    if (typeof entry !== 'object' || entry === null) fail('entry is not an object', name);
    const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
    if (typeof dtype !== 'string' || !(dtype in dtypeBytes)) {
      fail(`dtype ${JSON.stringify(dtype)} is not supported; supported: ${supportedDtypes.join(', ')}`, name);
    }
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0))
      fail('shape is not a list of non-negative integers', name);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)) {
      fail('data_offsets is not [begin, end] with non-negative integers', name);
    }
    const [begin, end] = offsets as [number, number];
    if (begin > end || end > dataLength)
      fail(`data_offsets [${begin}, ${end}] out of range of the ${dataLength}-byte data block`, name);
    const elements = (shape as number[]).reduce((a, b) => a * b, 1);
    const size = dtypeBytes[dtype as SafetensorsDtype];
    if (elements * size !== end - begin) {
      fail(
        `shape [${(shape as number[]).join(', ')}] of ${dtype} needs ${elements * size} bytes but data_offsets span ${end - begin}`,
        name,
      );
    }
    spans.push({ name, begin, end });
    const raw = bytes.subarray(dataStart + begin, dataStart + end);
    tensors.set(name, {
      dtype: dtype as SafetensorsDtype,
      shape: [...(shape as number[])],
      data: decodeData(dtype as SafetensorsDtype, raw, elements),
    });
  }
  spans.sort((a, b) => a.begin - b.begin || a.end - b.end);
  for (let i = 1; i < spans.length; i++) {
    const previous = at(spans, i - 1, 'spans');
    const current = at(spans, i, 'spans');
    if (current.begin < previous.end) {
      fail(
        `data [${current.begin}, ${current.end}) overlaps tensor "${previous.name}" [${previous.begin}, ${previous.end})`,
        current.name,
      );
    }
  }
  return { tensors, metadata };
}

/** Reads and parses a `.safetensors` file. */
export async function readSafetensors(path: string): Promise<SafetensorsContent> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new CheckpointError(`${path}: cannot read (${(error as Error).message})`, { file: path });
  }
  return parseSafetensors(bytes, { file: path });
}

/** Serializes float32 tensors (sorted by name) with optional string metadata. */
export function serializeSafetensors(
  tensors: ReadonlyMap<string, Float32Tensor>,
  metadata: Record<string, string> = {},
): Uint8Array {
  const names = [...tensors.keys()].sort();
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata;
  let offset = 0;
  for (const name of names) {
    const tensor = tensors.get(name)!;
    const elements = tensor.shape.reduce((a, b) => a * b, 1);
    if (elements !== tensor.data.length) {
      throw new CheckpointError(
        `tensor "${name}": shape [${tensor.shape.join(', ')}] has ${elements} elements but data has ${tensor.data.length}`,
        { tensor: name },
      );
    }
    header[name] = { dtype: 'F32', shape: tensor.shape, data_offsets: [offset, offset + 4 * elements] };
    offset += 4 * elements;
  }
  let headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(headerBytes.length / 8) * 8;
  if (padded !== headerBytes.length) {
    const withSpaces = new Uint8Array(padded).fill(0x20);
    withSpaces.set(headerBytes);
    headerBytes = withSpaces;
  }
  const out = new Uint8Array(8 + headerBytes.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  let position = 8 + headerBytes.length;
  for (const name of names) {
    const data = tensors.get(name)!.data;
    if (littleEndianHost) {
      out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), position);
    } else {
      const view = new DataView(out.buffer, position, data.byteLength);
      data.forEach((value, i) => {
        view.setFloat32(4 * i, value, true);
      });
    }
    position += data.byteLength;
  }
  return out;
}

/** Any numeric tensor as float32 (I64 values beyond 2^53 lose precision). */
export function toFloat32(tensor: SafeTensor): Float32Array {
  if (tensor.data instanceof Float32Array) return tensor.data;
  if (tensor.data instanceof BigInt64Array) return Float32Array.from(tensor.data, (v) => Number(v));
  return Float32Array.from(tensor.data);
}

function decodeData(dtype: SafetensorsDtype, raw: Uint8Array, elements: number): SafeTensor['data'] {
  // Copy into a fresh, aligned buffer: tensors in the file need not be aligned to their size.
  const copy = new Uint8Array(raw);
  const view = new DataView(copy.buffer);
  switch (dtype) {
    case 'F32':
      return littleEndianHost
        ? new Float32Array(copy.buffer, 0, elements)
        : Float32Array.from({ length: elements }, (_, i) => view.getFloat32(4 * i, true));
    case 'F64':
      return littleEndianHost
        ? new Float64Array(copy.buffer, 0, elements)
        : Float64Array.from({ length: elements }, (_, i) => view.getFloat64(8 * i, true));
    case 'I32':
      return littleEndianHost
        ? new Int32Array(copy.buffer, 0, elements)
        : Int32Array.from({ length: elements }, (_, i) => view.getInt32(4 * i, true));
    case 'I64':
      return littleEndianHost
        ? new BigInt64Array(copy.buffer, 0, elements)
        : BigInt64Array.from({ length: elements }, (_, i) => view.getBigInt64(8 * i, true));
    case 'F16': {
      const out = new Float32Array(elements);
      for (let i = 0; i < elements; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
      return out;
    }
    case 'BF16': {
      const out = new Float32Array(elements);
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < elements; i++) bits[i] = view.getUint16(2 * i, true) << 16;
      return out;
    }
  }
}

/** IEEE 754 binary16 bits → number (exact). */
export function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  return sign * (1 + fraction / 1024) * 2 ** (exponent - 15);
}
