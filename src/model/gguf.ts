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

/** Parses a GGUF file already in memory (tensor data stays in `bytes`; see `readGgufTensor`). */
export function parseGguf(bytes: Uint8Array, { file = '<memory>' }: { file?: string } = {}): GgufFile {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let position = 0;
  const fail = (message: string): never => {
    throw new CheckpointError(`${file}: ${message} (at byte ${position})`, { file, position });
  };
  const need = (size: number): void => {
    if (position + size > bytes.length) fail(`truncated: needs ${size} more bytes, the file has ${bytes.length}`);
  };
  const u32 = (): number => {
    need(4);
    const value = view.getUint32(position, true);
    position += 4;
    return value;
  };
  const u64 = (): number => {
    need(8);
    const value = view.getBigUint64(position, true);
    position += 8;
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) fail(`64-bit size ${value} is too large`);
    return Number(value);
  };
  const string = (): string => {
    const length = u64();
    need(length);
    const text = new TextDecoder('utf-8').decode(bytes.subarray(position, position + length));
    position += length;
    return text;
  };
  const scalar = (type: number): GgufValue => {
    const sizes: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
    if (type === 8) return string();
    if (type === 9) {
      const elementType = u32();
      const count = u64();
      const items: GgufValue[] = new Array(count);
      for (let i = 0; i < count; i++) items[i] = scalar(elementType);
      return items;
    }
    const size = sizes[type];
    if (size === undefined) return fail(`unknown metadata value type ${type}`);
    need(size);
    const at = position;
    position += size;
    switch (type) {
      case 0: return view.getUint8(at);
      case 1: return view.getInt8(at);
      case 2: return view.getUint16(at, true);
      case 3: return view.getInt16(at, true);
      case 4: return view.getUint32(at, true);
      case 5: return view.getInt32(at, true);
      case 6: return view.getFloat32(at, true);
      case 7: return view.getUint8(at) !== 0;
      case 10: return view.getBigUint64(at, true);
      case 11: return view.getBigInt64(at, true);
      default: return view.getFloat64(at, true);
    }
  };

  if (u32() !== magic) fail('not a GGUF file (the magic is not "GGUF")');
  const version = u32();
  if (version !== 2 && version !== 3) fail(`GGUF version ${version} is not supported; supported: 2, 3`);
  const tensorCount = u64();
  const metadataCount = u64();
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < metadataCount; i++) {
    const key = string();
    metadata.set(key, scalar(u32()));
  }
  const rawInfos: { name: string; shape: number[]; type: GgmlTypeName; relative: number; count: number }[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = string();
    const dims = u32();
    const sizes: number[] = [];
    for (let d = 0; d < dims; d++) sizes.push(u64());
    const type = ggmlTypeName(u32(), { file, tensor: name });
    const relative = u64();
    rawInfos.push({ name, shape: sizes.reverse(), type, relative, count: sizes.reduce((a, b) => a * b, 1) });
  }
  const alignmentValue = metadata.get('general.alignment') ?? 32;
  const alignment = Number(alignmentValue);
  if (!Number.isInteger(alignment) || alignment <= 0) fail(`general.alignment ${String(alignmentValue)} is not a positive integer`);
  const dataStart = Math.ceil(position / alignment) * alignment;
  const tensors = rawInfos.map((info): GgufTensorInfo => {
    const byteLength = ggmlByteSize(info.type, info.count);
    const offset = dataStart + info.relative;
    if (info.relative % alignment !== 0) fail(`tensor "${info.name}" offset ${info.relative} is not a multiple of the alignment ${alignment}`);
    if (offset + byteLength > bytes.length) fail(`tensor "${info.name}" data [${offset}, ${offset + byteLength}) runs past the end of the file (${bytes.length} bytes)`);
    return { name: info.name, shape: info.shape, type: info.type, offset, byteLength };
  });
  return { version, metadata, tensors, alignment, bytes, file };
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
  return { shape: [...info.shape], data: dequantize(info.type, gguf.bytes.subarray(info.offset, info.offset + info.byteLength), count) };
}

/** A metadata value; a CheckpointError naming the key when it is absent (and no fallback is given). */
export function ggufMetadata(gguf: GgufFile, key: string, fallback?: GgufValue): GgufValue {
  const value = gguf.metadata.get(key) ?? fallback;
  if (value === undefined) throw new CheckpointError(`${gguf.file}: metadata "${key}" is missing`, { file: gguf.file, key });
  return value;
}
