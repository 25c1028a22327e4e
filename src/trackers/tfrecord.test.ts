import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32c, maskedCrc32c, scalarsEvent, tfRecord } from './tfrecord.ts';

test('CRC-32C matches the published check value and TFRecord masking', () => {
  assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283); // the CRC-32C check value (RFC 3720, B.4)
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa); // 32 zero bytes (RFC 3720, B.4)
  const crc = 0xe3069283;
  assert.equal(
    maskedCrc32c(new TextEncoder().encode('123456789')),
    ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0,
  );
});

test('a TFRecord frames its data with the little-endian length and both masked CRCs', () => {
  const data = new Uint8Array([1, 2, 3]);
  const record = tfRecord(data);
  const view = new DataView(record.buffer);
  assert.equal(record.length, 8 + 4 + 3 + 4);
  assert.equal(view.getBigUint64(0, true), 3n);
  assert.equal(view.getUint32(8, true), maskedCrc32c(record.subarray(0, 8)));
  assert.deepEqual([...record.subarray(12, 15)], [1, 2, 3]);
  assert.equal(view.getUint32(15, true), maskedCrc32c(data));
});

test('a scalars event is the Event protobuf: wall_time (field 1, double), step (2, varint), summary (5) of Values { tag (1), simple_value (2, float) }', () => {
  const event = scalarsEvent(0.5, 300, [['kl', 0.25]]);
  // 0x09 + double 0.5 | 0x10 + varint 300 (0xac 0x02) | 0x2a len 11 [0x0a len 9 [0x0a len 2 "kl" | 0x15 + float 0.25]]
  assert.deepEqual(
    [...event],
    [
      0x09, 0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0x10, 0xac, 0x02, 0x2a, 11, 0x0a, 9, 0x0a, 2, 0x6b, 0x6c, 0x15, 0, 0, 0x80,
      0x3e,
    ],
  );
});
