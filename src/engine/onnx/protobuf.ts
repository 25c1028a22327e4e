/**
 * A minimal protobuf (proto3 wire format) encoder: enough to write ONNX's ModelProto.
 * https://protobuf.dev/programming-guides/encoding/
 *
 *   tag = (field << 3) | wireType     wire types: 0 varint, 2 length-delimited, 5 fixed32
 *
 * A message is built as a list of byte chunks, so large payloads (weights as `raw_data`) are
 * referenced, not copied, until `concat` joins the whole model once.
 */
import { at } from '../../core/indexing.ts';

const VARINT = 0;
const LENGTH_DELIMITED = 2;
const FIXED32 = 5;

export class ProtoWriter {
  private readonly chunks: Uint8Array[] = [];
  private size = 0;

  get byteLength(): number {
    return this.size;
  }

  private push(bytes: Uint8Array): void {
    this.chunks.push(bytes);
    this.size += bytes.length;
  }

  private varint(value: number | bigint): void {
    let v = BigInt.asUintN(64, BigInt(value)); // negative int64s are written as 10-byte two's complement
    const bytes: number[] = [];
    while (v >= 0x80n) {
      bytes.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    bytes.push(Number(v));
    this.push(Uint8Array.from(bytes));
  }

  private tag(field: number, wireType: number): void {
    this.varint((field << 3) | wireType);
  }

  /** An int32/int64/enum/bool field (written even when 0, which proto3 readers accept). */
  int(field: number, value: number | bigint): this {
    this.tag(field, VARINT);
    this.varint(value);
    return this;
  }

  /** A float field (fixed32, little-endian). */
  float(field: number, value: number): this {
    this.tag(field, FIXED32);
    this.push(new Uint8Array(new Float32Array([value]).buffer));
    return this;
  }

  bytes(field: number, value: Uint8Array): this {
    return this.byteParts(field, [value]);
  }

  /** One bytes field written from consecutive parts (views; nothing joined before the final buffer). */
  byteParts(field: number, parts: readonly Uint8Array[]): this {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(parts.reduce((sum, part) => sum + part.length, 0));
    for (const part of parts) this.push(part);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  /** A nested message. */
  message(field: number, inner: ProtoWriter): this {
    this.tag(field, LENGTH_DELIMITED);
    this.varint(inner.size);
    for (const chunk of inner.chunks) this.push(chunk);
    return this;
  }

  /** A packed repeated float field (little-endian fixed32s). */
  packedFloats(field: number, values: ArrayLike<number>): this {
    const data = new Float32Array(values.length);
    data.set(Array.from(values));
    return this.bytes(field, new Uint8Array(data.buffer));
  }

  /** A packed repeated int64 field (varints). */
  packedInts(field: number, values: ArrayLike<number | bigint>): this {
    const inner = new ProtoWriter();
    for (let i = 0; i < values.length; i++) inner.varint(at(values, i));
    this.tag(field, LENGTH_DELIMITED);
    this.varint(inner.size);
    for (const chunk of inner.chunks) this.push(chunk);
    return this;
  }

  /** The encoded message as one buffer. */
  concat(): Uint8Array {
    const out = new Uint8Array(this.size);
    let offset = 0;
    for (const chunk of this.chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  }
}
