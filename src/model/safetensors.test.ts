import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CheckpointError } from '../core/errors.ts';
import { halfToFloat, parseSafetensors, serializeSafetensors, toFloat32 } from './safetensors.ts';

/** Builds a file from a header object and a data block, the way another writer might. */
function buildFile(header: unknown, data: Uint8Array, { headerText }: { headerText?: string } = {}): Uint8Array {
  const headerBytes = new TextEncoder().encode(headerText ?? JSON.stringify(header));
  const out = new Uint8Array(8 + headerBytes.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  out.set(headerBytes, 8);
  out.set(data, 8 + headerBytes.length);
  return out;
}

function leBytes(write: (view: DataView) => void, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  write(new DataView(bytes.buffer));
  return bytes;
}

test('serialization matches the reference layout (header padded with spaces to 8 bytes)', () => {
  const bytes = serializeSafetensors(
    new Map([['attn.0', { shape: [1, 2, 3], data: Float32Array.of(0, 1, 2, 3, 4, 5) }]]),
  );
  const headerJson = '{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}';
  const headerLength = Math.ceil(headerJson.length / 8) * 8;
  assert.equal(new DataView(bytes.buffer).getBigUint64(0, true), BigInt(headerLength));
  assert.equal(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)), headerJson.padEnd(headerLength, ' '));
  assert.equal((8 + headerLength) % 8, 0);
  const data = bytes.subarray(8 + headerLength);
  assert.deepEqual([...data.subarray(4, 8)], [0, 0, 0x80, 0x3f]); // 1.0f little-endian
  assert.equal(bytes.length, 8 + headerLength + 24);
});

test('float32 round trip is bit-exact, with metadata, including NaN payloads and -0', () => {
  const weird = new Float32Array(new Uint32Array([0x7fc00001, 0x80000000, 0x7f800000, 0x00000001]).buffer);
  const tensors = new Map([
    ['b', { shape: [2, 2], data: Float32Array.of(1.5, -2.25, 1e-30, 3.4e38) }],
    ['a', { shape: [4], data: weird }],
    ['empty', { shape: [0, 3], data: new Float32Array(0) }],
  ]);
  const parsed = parseSafetensors(serializeSafetensors(tensors, { format: 'pt' }));
  assert.deepEqual(parsed.metadata, { format: 'pt' });
  assert.deepEqual([...parsed.tensors.keys()], ['a', 'b', 'empty']);
  for (const [name, tensor] of tensors) {
    const read = parsed.tensors.get(name)!;
    assert.equal(read.dtype, 'F32');
    assert.deepEqual(read.shape, tensor.shape);
    assert.deepEqual(new Uint32Array(toFloat32(read).buffer.slice(0)), new Uint32Array(tensor.data.buffer.slice(0)));
  }
});

test('reads F16, BF16, F64, I32, I64 (unaligned offsets included)', () => {
  // F16 [1, -2, 0.5] = 6 bytes, so the BF16 tensor after it starts at offset 6 (not 4-aligned).
  const f16 = leBytes(
    (v) =>
      [0x3c00, 0xc000, 0x3800].forEach((h, i) => {
        v.setUint16(2 * i, h, true);
      }),
    6,
  );
  const bf16 = leBytes(
    (v) =>
      [0x3f80, 0xc0a0].forEach((h, i) => {
        v.setUint16(2 * i, h, true);
      }),
    4,
  ); // 1, -5
  const f64 = leBytes((v) => v.setFloat64(0, Math.PI, true), 8);
  const i32 = leBytes((v) => v.setInt32(0, -7, true), 4);
  const i64 = leBytes((v) => v.setBigInt64(0, 123456789012345n, true), 8);
  const data = new Uint8Array([...f16, ...bf16, ...f64, ...i32, ...i64]);
  const header = {
    __metadata__: { note: 'hand-built' },
    half: { dtype: 'F16', shape: [3], data_offsets: [0, 6] },
    brain: { dtype: 'BF16', shape: [2], data_offsets: [6, 10] },
    double: { dtype: 'F64', shape: [1], data_offsets: [10, 18] },
    int: { dtype: 'I32', shape: [1], data_offsets: [18, 22] },
    long: { dtype: 'I64', shape: [1], data_offsets: [22, 30] },
  };
  const { tensors } = parseSafetensors(buildFile(header, data));
  assert.deepEqual([...(tensors.get('half')!.data as Float32Array)], [1, -2, 0.5]);
  assert.deepEqual([...(tensors.get('brain')!.data as Float32Array)], [1, -5]);
  assert.equal(tensors.get('double')!.data[0], Math.PI);
  assert.equal(tensors.get('int')!.data[0], -7);
  assert.equal(tensors.get('long')!.data[0], 123456789012345n);
  assert.deepEqual([...toFloat32(tensors.get('long')!)], [Math.fround(123456789012345)]);
});

test('halfToFloat handles subnormals, infinities and NaN', () => {
  assert.equal(halfToFloat(0x0001), 2 ** -24);
  assert.equal(halfToFloat(0x7bff), 65504);
  assert.equal(halfToFloat(0xfc00), -Infinity);
  assert.ok(Number.isNaN(halfToFloat(0x7e00)));
  assert.ok(Object.is(halfToFloat(0x8000), -0));
});

function assertCheckpointError(bytes: Uint8Array, pattern: RegExp, tensor?: string): void {
  assert.throws(
    () => parseSafetensors(bytes, { file: 'model.safetensors' }),
    (error: unknown) => {
      assert.ok(error instanceof CheckpointError);
      assert.match(error.message, /^model\.safetensors: /);
      assert.match(error.message, pattern);
      if (tensor !== undefined) {
        assert.equal(error.details.tensor, tensor);
        assert.ok(error.message.includes(`"${tensor}"`));
      }
      return true;
    },
  );
}

test('malformed files are CheckpointErrors naming the file and tensor', () => {
  const eight = new Uint8Array(8);
  assertCheckpointError(new Uint8Array(3), /shorter than the 8-byte/);
  assertCheckpointError(
    leBytes((v) => v.setBigUint64(0, 1000n, true), 16),
    /exceeds the file size/,
  );
  assertCheckpointError(buildFile(null, eight, { headerText: '{not json' }), /not valid UTF-8 JSON/);
  assertCheckpointError(buildFile([1, 2], eight), /not a JSON object/);
  assertCheckpointError(buildFile({ __metadata__: { a: 1 } }, eight), /__metadata__\["a"\] is not a string/);
  assertCheckpointError(
    buildFile({ w: { dtype: 'Q4', shape: [2], data_offsets: [0, 8] } }, eight),
    /dtype "Q4" is not supported; supported: F32, F16/,
    'w',
  );
  assertCheckpointError(
    buildFile({ w: { dtype: 'F32', shape: [4], data_offsets: [0, 16] } }, eight),
    /out of range/,
    'w',
  );
  assertCheckpointError(
    buildFile({ w: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }, eight),
    /needs 12 bytes but data_offsets span 8/,
    'w',
  );
  assertCheckpointError(
    buildFile({ w: { dtype: 'F32', shape: [2], data_offsets: [8, 0] } }, eight),
    /out of range/,
    'w',
  );
  assertCheckpointError(
    buildFile({ w: { dtype: 'F32', shape: ['2'], data_offsets: [0, 8] } }, eight),
    /shape is not/,
    'w',
  );
  assertCheckpointError(
    buildFile(
      { a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } },
      eight,
    ),
    /overlaps tensor "a"/,
    'b',
  );
});

test('serializing a tensor whose shape disagrees with its data is an error', () => {
  assert.throws(
    () => serializeSafetensors(new Map([['w', { shape: [3], data: new Float32Array(2) }]])),
    CheckpointError,
  );
});
