/**
 * The protobuf wire format (https://protobuf.dev/programming-guides/encoding/), the few pieces the
 * Tinker protocol needs: varints, fixed 64-bit doubles, length-delimited bytes / strings / nested
 * messages — a writer and a reader. Generic: the Tinker messages live in ./tinker-proto.ts.
 *
 *   const writer = new ProtoWriter();
 *   writer.string(1, 'model'); writer.int(2, 7); writer.message(3, (inner) => inner.bytes(1, payload));
 *   const bytes = writer.finish();
 *   for (const field of readFields(bytes)) …   // { number, wireType, varint | bytes | fixed64 }
 */
import { InvalidArgumentError } from '../../core/errors.ts';

const VARINT = 0;
const FIXED64 = 1;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

export class ProtoWriter {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  private push(part: Uint8Array): void {
    this.parts.push(part);
    this.length += part.length;
  }

  private tag(field: number, wireType: number): void {
    this.varint(BigInt(field * 8 + wireType));
  }

  private varint(value: bigint): void {
    let rest = BigInt.asUintN(64, value);
    const out: number[] = [];
    do {
      let byte = Number(rest & 0x7fn);
      rest >>= 7n;
      if (rest !== 0n) byte |= 0x80;
      out.push(byte);
    } while (rest !== 0n);
    this.push(Uint8Array.from(out));
  }

  /** An int32/int64/uint/bool/enum field; proto3 skips the default 0 unless `always`. */
  int(field: number, value: number | bigint, always = false): this {
    const big = typeof value === 'bigint' ? value : BigInt(Math.trunc(value));
    if (big === 0n && !always) return this;
    this.tag(field, VARINT);
    this.varint(big);
    return this;
  }

  bool(field: number, value: boolean): this {
    return value ? this.int(field, 1) : this;
  }

  double(field: number, value: number): this {
    const bytes = new Uint8Array(8);
    new DataView(bytes.buffer).setFloat64(0, value, true);
    this.tag(field, FIXED64);
    this.push(bytes);
    return this;
  }

  /** A bytes field; proto3 skips an empty one unless `always` (a oneof member is always written). */
  bytes(field: number, value: Uint8Array, always = false): this {
    if (value.length === 0 && !always) return this;
    this.tag(field, LENGTH_DELIMITED);
    this.varint(BigInt(value.length));
    this.push(value);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  /** A nested message (always written, even when empty: presence matters for message fields). */
  message(field: number, build: (writer: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    build(inner);
    return this.bytes(field, inner.finish(), true);
  }

  /** A packed repeated int64 field. */
  packedInts(field: number, values: readonly number[]): this {
    if (values.length === 0) return this;
    const inner = new ProtoWriter();
    for (const value of values) inner.varint(BigInt(value));
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.length);
    let offset = 0;
    for (const part of this.parts) {
      out.set(part, offset);
      offset += part.length;
    }
    return out;
  }
}

export interface ProtoField {
  number: number;
  wireType: number;
  /** Set for wire type 0 (varint). */
  varint?: bigint;
  /** Set for wire types 1 (8 bytes), 2 (the payload) and 5 (4 bytes). */
  bytes?: Uint8Array;
}

function malformed(reason: string): InvalidArgumentError {
  return new InvalidArgumentError(`malformed protobuf message: ${reason}`, { reason });
}

/** The fields of one message, in wire order (unknown fields included, as protobuf keeps them). */
export function readFields(bytes: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = [];
  let offset = 0;
  const readVarint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; shift < 70n; shift += 7n) {
      if (offset >= bytes.length) throw malformed('truncated varint');
      const byte = bytes[offset++] ?? 0;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
    }
    throw malformed('varint longer than 10 bytes');
  };
  const take = (count: number): Uint8Array => {
    if (count < 0 || offset + count > bytes.length) throw malformed('field runs past the end');
    const slice = bytes.subarray(offset, offset + count);
    offset += count;
    return slice;
  };
  while (offset < bytes.length) {
    const key = readVarint();
    const number = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (number === 0) throw malformed('field number 0');
    if (wireType === VARINT) fields.push({ number, wireType, varint: readVarint() });
    else if (wireType === FIXED64) fields.push({ number, wireType, bytes: take(8) });
    else if (wireType === LENGTH_DELIMITED) fields.push({ number, wireType, bytes: take(Number(readVarint())) });
    else if (wireType === FIXED32) fields.push({ number, wireType, bytes: take(4) });
    else throw malformed(`unsupported wire type ${wireType}`);
  }
  return fields;
}

/** Little-endian packed values (the Tinker protocol's `bytes` tensors). */
export function littleEndian(bytes: Uint8Array, type: 'int32' | 'int64' | 'float32' | 'float64'): number[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = type === 'int32' || type === 'float32' ? 4 : 8;
  if (bytes.length % size !== 0) throw malformed(`${bytes.length} bytes is not a whole number of ${type}`);
  const out: number[] = [];
  for (let offset = 0; offset < bytes.length; offset += size) {
    if (type === 'int32') out.push(view.getInt32(offset, true));
    else if (type === 'int64') out.push(Number(view.getBigInt64(offset, true)));
    else if (type === 'float32') out.push(view.getFloat32(offset, true));
    else out.push(view.getFloat64(offset, true));
  }
  return out;
}

/** Values packed little-endian as `type` (numpy's `tobytes()` of that dtype). */
export function packLittleEndian(values: ArrayLike<number>, type: 'int32' | 'int64' | 'float32'): Uint8Array {
  const size = type === 'int32' || type === 'float32' ? 4 : 8;
  const bytes = new Uint8Array(values.length * size);
  const view = new DataView(bytes.buffer);
  for (let index = 0; index < values.length; index++) {
    const value = values[index] ?? 0;
    if (type === 'int32') view.setInt32(index * 4, value, true);
    else if (type === 'int64') view.setBigInt64(index * 8, BigInt(Math.trunc(value)), true);
    else view.setFloat32(index * 4, value, true);
  }
  return bytes;
}
