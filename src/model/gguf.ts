/**
 * The GGUF file format (ggml's docs/gguf.md), versions 2 and 3, little-endian:
 *
 *   magic "GGUF" · version u32 · tensor count u64 · metadata count u64
 *   metadata:     key (string) · value type u32 · value
 *   tensor infos: name (string) · n_dims u32 · dims u64[n_dims] (dims[0] varies fastest) ·
 *                 GGML type u32 · offset u64 (relative to the data block)
 *   padding to `general.alignment` (default 32) · tensor data (each tensor aligned likewise)
 *
 * A string is a u64 byte length and UTF-8 bytes; an array is an element type u32, a count u64 and
 * the elements. `shape` here is the row-major (numpy) order, i.e. dims reversed: a GGUF linear
 * weight with dims [in, out] has shape [out, in], like a PyTorch `Linear.weight`.
 */
import { readFile } from 'node:fs/promises';
import { CheckpointError } from '../core/errors.ts';
import { dequantize, ggmlByteSize, ggmlTypeName, type GgmlTypeName } from './gguf-dequant.ts';

export type GgufValue = number | bigint | boolean | string | GgufValue[];

export interface GgufTensorInfo {
  name: string;
  /** Row-major shape (GGUF dims reversed). */
  shape: number[];
  type: GgmlTypeName;
  /** Absolute byte offset of the tensor's data in the file. */
  offset: number;
  byteLength: number;
}

export interface GgufFile {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: GgufTensorInfo[];
  alignment: number;
  /** The whole file. */
  bytes: Uint8Array;
  file: string;
}

const magic = 0x46554747; // "GGUF" read as a little-endian u32

/** Byte sizes of the fixed-size metadata value types (gguf.md `gguf_metadata_value_type`); 8 = string, 9 = array. */
const valueSizes: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

/** A cursor over the file: little-endian reads that fail with the byte position. */
class GgufReader {
  position = 0;
  private readonly view: DataView;

  constructor(
    readonly bytes: Uint8Array,
    readonly file: string,
  ) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  fail(message: string): never {
    throw new CheckpointError(`${this.file}: ${message} (at byte ${this.position})`, {
      file: this.file,
      position: this.position,
    });
  }

  u32(): number {
    return this.view.getUint32(this.advance(4), true);
  }

  u64(): number {
    const value = this.view.getBigUint64(this.advance(8), true);
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) this.fail(`64-bit size ${value} is too large`);
    return Number(value);
  }

  string(): string {
    const length = this.u64();
    const start = this.advance(length);
    return new TextDecoder('utf-8').decode(this.bytes.subarray(start, start + length));
  }

  /** A metadata value of `type`: a number, bigint (64-bit integers), boolean, string or array. */
  value(type: number): GgufValue {
    if (type === 8) return this.string();
    if (type === 9) {
      const elementType = this.u32();
      const count = this.u64();
      const items: GgufValue[] = new Array(count);
      for (let i = 0; i < count; i++) items[i] = this.value(elementType);
      return items;
    }
    const size = valueSizes[type];
    if (size === undefined) return this.fail(`unknown metadata value type ${type}`);
    const at = this.advance(size);
    const view = this.view;
    switch (type) {
      case 0:
        return view.getUint8(at);
      case 1:
        return view.getInt8(at);
      case 2:
        return view.getUint16(at, true);
      case 3:
        return view.getInt16(at, true);
      case 4:
        return view.getUint32(at, true);
      case 5:
        return view.getInt32(at, true);
      case 6:
        return view.getFloat32(at, true);
      case 7:
        return view.getUint8(at) !== 0;
      case 10:
        return view.getBigUint64(at, true);
      case 11:
        return view.getBigInt64(at, true);
      default:
        return view.getFloat64(at, true);
    }
  }

  /** Moves past `size` bytes; returns where they start. */
  private advance(size: number): number {
    if (this.position + size > this.bytes.length)
      this.fail(`truncated: needs ${size} more bytes, the file has ${this.bytes.length}`);
    const start = this.position;
    this.position += size;
    return start;
  }
}

/** A tensor info as stored: its offset relative to the data block. */
interface StoredTensorInfo {
  name: string;
  shape: number[];
  type: GgmlTypeName;
  relative: number;
  count: number;
}

/** Parses a GGUF file already in memory (tensor data stays in `bytes`; see `readGgufTensor`). */
export function parseGguf(bytes: Uint8Array, { file = '<memory>' }: { file?: string } = {}): GgufFile {
  const reader = new GgufReader(bytes, file);
  if (reader.u32() !== magic) reader.fail('not a GGUF file (the magic is not "GGUF")');
  const version = reader.u32();
  if (version !== 2 && version !== 3) reader.fail(`GGUF version ${version} is not supported; supported: 2, 3`);
  const tensorCount = reader.u64();
  const metadataCount = reader.u64();
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < metadataCount; i++) {
    const key = reader.string();
    metadata.set(key, reader.value(reader.u32()));
  }
  const stored = Array.from({ length: tensorCount }, () => readTensorInfo(reader));
  const alignmentValue = metadata.get('general.alignment') ?? 32;
  const alignment = Number(alignmentValue);
  if (!Number.isInteger(alignment) || alignment <= 0)
    reader.fail(`general.alignment ${String(alignmentValue)} is not a positive integer`);
  const dataStart = Math.ceil(reader.position / alignment) * alignment;
  const tensors = stored.map((info) => placeTensor(reader, info, dataStart, alignment));
  return { version, metadata, tensors, alignment, bytes, file };
}

/** name · n_dims u32 · dims u64[n_dims] · GGML type u32 · offset u64. */
function readTensorInfo(reader: GgufReader): StoredTensorInfo {
  const name = reader.string();
  const dims = reader.u32();
  const sizes: number[] = [];
  for (let d = 0; d < dims; d++) sizes.push(reader.u64());
  const type = ggmlTypeName(reader.u32(), { file: reader.file, tensor: name });
  const relative = reader.u64();
  return { name, shape: sizes.reverse(), type, relative, count: sizes.reduce((a, b) => a * b, 1) };
}

/** The tensor's absolute place in the file, checked against the alignment and the file's end. */
function placeTensor(reader: GgufReader, info: StoredTensorInfo, dataStart: number, alignment: number): GgufTensorInfo {
  const byteLength = ggmlByteSize(info.type, info.count);
  const offset = dataStart + info.relative;
  const fileLength = reader.bytes.length;
  if (info.relative % alignment !== 0)
    reader.fail(`tensor "${info.name}" offset ${info.relative} is not a multiple of the alignment ${alignment}`);
  if (offset + byteLength > fileLength)
    reader.fail(
      `tensor "${info.name}" data [${offset}, ${offset + byteLength}) runs past the end of the file (${fileLength} bytes)`,
    );
  return { name: info.name, shape: info.shape, type: info.type, offset, byteLength };
}

/** Reads and parses a `.gguf` file. */
export async function readGguf(path: string): Promise<GgufFile> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new CheckpointError(`${path}: cannot read (${(error as Error).message})`, { file: path });
  }
  return parseGguf(bytes, { file: path });
}

/** One tensor dequantized to float32, in row-major `shape`. */
export function readGgufTensor(gguf: GgufFile, info: GgufTensorInfo): { shape: number[]; data: Float32Array } {
  const count = info.shape.reduce((a, b) => a * b, 1);
  return {
    shape: [...info.shape],
    data: dequantize(info.type, gguf.bytes.subarray(info.offset, info.offset + info.byteLength), count),
  };
}

/** A metadata value; a CheckpointError naming the key when it is absent (and no fallback is given). */
export function ggufMetadata(gguf: GgufFile, key: string, fallback?: GgufValue): GgufValue {
  const value = gguf.metadata.get(key) ?? fallback;
  if (value === undefined)
    throw new CheckpointError(`${gguf.file}: metadata "${key}" is missing`, { file: gguf.file, key });
  return value;
}
