/**
 * TensorBoard's on-disk format, written by hand: TFRecord framing (length, masked CRC-32C of the
 * length, data, masked CRC-32C of the data; all little-endian) around `tensorflow.Event`
 * protobufs (tensorboard/compat/proto/event.proto, summary.proto):
 *
 *   Event   { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
 *   Summary { repeated Value value = 1; }   Value { string tag = 1; float simple_value = 2; }
 */
import { at } from '../core/indexing.ts';

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as TFRecord uses. */
const crcTable = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = at(crcTable, (crc ^ byte) & 0xff, 'CRC-32C table') ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** TFRecord's mask: rotate right by 15 and add a constant, so a CRC of CRCs is not trivial. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One TFRecord: [u64 length][u32 masked crc(length)][data][u32 masked crc(data)]. */
export function tfRecord(data: Uint8Array): Uint8Array {
  const record = new Uint8Array(8 + 4 + data.length + 4);
  const view = new DataView(record.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(record.subarray(0, 8)), true);
  record.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return record;
}

// ---- protobuf wire format (only what Event needs) ------------------------------------------

function varint(value: bigint): number[] {
  const bytes: number[] = [];
  let v = BigInt.asUintN(64, value);
  do {
    let byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) byte |= 0x80;
    bytes.push(byte);
  } while (v !== 0n);
  return bytes;
}

function lengthDelimited(field: number, payload: Uint8Array): number[] {
  return [...varint(BigInt((field << 3) | 2)), ...varint(BigInt(payload.length)), ...payload];
}

function double(field: number, value: number): number[] {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, value, true);
  return [(field << 3) | 1, ...bytes];
}

function float(field: number, value: number): number[] {
  const bytes = new Uint8Array(4);
  new DataView(bytes.buffer).setFloat32(0, value, true);
  return [(field << 3) | 5, ...bytes];
}

const text = new TextEncoder();

/** The first event of every file: `file_version: "brain.Event:2"`. */
export function fileVersionEvent(wallTime: number): Uint8Array {
  return new Uint8Array([...double(1, wallTime), ...lengthDelimited(3, text.encode('brain.Event:2'))]);
}

/** An event holding one scalar per tag at `step` (TensorBoard's Scalars tab; float32 values). */
export function scalarsEvent(wallTime: number, step: number, scalars: readonly [string, number][]): Uint8Array {
  const values = scalars.flatMap(([tag, value]) =>
    lengthDelimited(1, new Uint8Array([...lengthDelimited(1, text.encode(tag)), ...float(2, value)])),
  );
  return new Uint8Array([
    ...double(1, wallTime),
    ...[(2 << 3) | 0, ...varint(BigInt(step))],
    ...lengthDelimited(5, new Uint8Array(values)),
  ]);
}
