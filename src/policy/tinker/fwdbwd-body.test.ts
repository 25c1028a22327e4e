/**
 * forward_backward's body when the server's client/config asks for zstd (`proto_compress_fwdbwd`):
 * compressed with node:zlib's zstd where Node has it (22.15+), else sent as is without
 * Content-Encoding — as the SDK sends it with the flag off, and as the server accepts it. Through
 * the SDK-shaped loopback server, which decompresses a zstd body and refuses an encoding it cannot read.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as zlib from 'node:zlib';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { forwardBackwardBody, nodeZstd } from './fwdbwd-body.ts';
import { startFakeServer } from './sdk-shaped-server.ts';
import { TinkerPolicy } from './tinker-policy.ts';

test('the body: as is unless the server asks and a zstd compressor exists; a compressed one says so', () => {
  const protobuf = new Uint8Array([10, 3, 97, 98, 99]);
  assert.deepEqual(forwardBackwardBody(protobuf, { serverAsks: false }), { protobuf });
  assert.deepEqual(forwardBackwardBody(protobuf, { serverAsks: true, compress: null }), { protobuf });
  const reversed = forwardBackwardBody(protobuf, { serverAsks: true, compress: (bytes) => bytes.slice().reverse() });
  assert.deepEqual(reversed, { protobuf: protobuf.slice().reverse(), headers: { 'content-encoding': 'zstd' } });
  const decompress = (zlib as { zstdDecompressSync?: (input: Uint8Array) => Buffer }).zstdDecompressSync;
  assert.equal(nodeZstd === undefined, decompress === undefined, 'node:zlib has both or neither');
  if (nodeZstd !== undefined && decompress !== undefined) {
    const sent = forwardBackwardBody(protobuf, { serverAsks: true });
    assert.deepEqual(new Uint8Array(decompress(sent.protobuf ?? new Uint8Array())), protobuf);
  }
});

test(`a server asking for zstd gets ${nodeZstd === undefined ? 'the uncompressed body without Content-Encoding (Node 20 has no zstd)' : 'a zstd body'}, and trains`, async () => {
  const server = await startFakeServer({ clientConfig: { proto_compress_fwdbwd: true } });
  const policy = await TinkerPolicy.create({
    baseUrl: server.baseUrl,
    baseModel: 'base',
    tokenizer: byteTokenizer,
    heartbeatMs: 0,
    environment: {},
  });
  try {
    const sequences = [[1, 2, 3, 4]];
    const scored = await policy.logprobs({ sequences });
    assert.equal(scored.length, 1);
    const posts = server.log.filter((entry) => entry.path === '/api/v1/forward_backward');
    assert.ok(posts.length >= 1);
    for (const post of posts)
      assert.equal(post.headers['content-encoding'], nodeZstd === undefined ? undefined : 'zstd');
    assert.deepEqual(server.refusals, []);
  } finally {
    await policy.close();
    await server.close();
  }
});
