/**
 * A minimal GGUF v3 writer (the layout in gguf.ts): metadata of strings, numbers (u32, i32, f32),
 * booleans and lists of those, and tensors given as raw GGML-typed bytes. Used by the tests to build
 * small files; not a quantizer.
 */
import { CheckpointError } from '../core/errors.ts';
import { ggmlByteSize, ggmlTypes, type GgmlTypeName } from './gguf-dequant.ts';
import { at } from '../core/indexing.ts';

/** A metadata value with its GGUF type: 'u32' | 'i32' | 'f32' | 'bool' | 'string', or a list of one of those. */
export type GgufWriterValue =
  | { type: 'u32' | 'i32' | 'f32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'list'; itemType: 'u32' | 'i32' | 'f32' | 'string'; value: (number | string)[] };

export interface GgufWriterTensor {
  name: string;
  /** Row-major shape (written reversed, as GGUF dims). */
  shape: number[];
  type: GgmlTypeName;
  bytes: Uint8Array;
}

const typeIds = { u32: 4, i32: 5, f32: 6, bool: 7, string: 8, list: 9 } as const;

export function writeGguf({
  metadata,
  tensors,
  alignment = 32,
}: {
  metadata: Record<string, GgufWriterValue>;
  tensors: GgufWriterTensor[];
  alignment?: number;
}): Uint8Array {
  const parts: Uint8Array[] = [];
  const encoder = new TextEncoder();
  const number = (kind: 'u32' | 'i32' | 'f32' | 'u64', value: number): void => {
    const bytes = new Uint8Array(kind === 'u64' ? 8 : 4);
    const view = new DataView(bytes.buffer);
    if (kind === 'u64') view.setBigUint64(0, BigInt(value), true);
    else if (kind === 'u32') view.setUint32(0, value, true);
    else if (kind === 'i32') view.setInt32(0, value, true);
    else view.setFloat32(0, value, true);
    parts.push(bytes);
  };
  const string = (text: string): void => {
    const bytes = encoder.encode(text);
    number('u64', bytes.length);
    parts.push(bytes);
  };
  const item = (kind: 'u32' | 'i32' | 'f32' | 'string', value: number | string): void =>
    kind === 'string' ? string(String(value)) : number(kind, Number(value));

  parts.push(encoder.encode('GGUF'));
  number('u32', 3);
  number('u64', tensors.length);
  const entries = Object.entries({
    ...metadata,
    'general.alignment': { type: 'u32', value: alignment } as GgufWriterValue,
  });
  number('u64', entries.length);
  for (const [key, entry] of entries) {
    string(key);
    number('u32', typeIds[entry.type]);
    if (entry.type === 'list') {
      number('u32', typeIds[entry.itemType]);
      number('u64', entry.value.length);
      for (const value of entry.value) item(entry.itemType, value);
    } else if (entry.type === 'bool') parts.push(Uint8Array.of(entry.value ? 1 : 0));
    else item(entry.type, entry.value);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const tensor of tensors) {
    const expected = ggmlByteSize(
      tensor.type,
      tensor.shape.reduce((a, b) => a * b, 1),
    );
    if (tensor.bytes.length !== expected)
      throw new CheckpointError(
        `tensor "${tensor.name}": ${tensor.type} [${tensor.shape}] needs ${expected} bytes, got ${tensor.bytes.length}`,
        { tensor: tensor.name },
      );
    string(tensor.name);
    number('u32', tensor.shape.length);
    for (const size of [...tensor.shape].reverse()) number('u64', size);
    number('u32', ggmlTypes[tensor.type]);
    number('u64', offset);
    offsets.push(offset);
    offset = Math.ceil((offset + tensor.bytes.length) / alignment) * alignment;
  }
  const headerLength = parts.reduce((sum, part) => sum + part.length, 0);
  const dataStart = Math.ceil(headerLength / alignment) * alignment;
  const out = new Uint8Array(dataStart + offset);
  let position = 0;
  for (const part of parts) {
    out.set(part, position);
    position += part.length;
  }
  tensors.forEach((tensor, i) => {
    out.set(tensor.bytes, dataStart + at(offsets, i, 'offsets'));
  });
  return out;
}
