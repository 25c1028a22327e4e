import assert from 'node:assert/strict';
import { test } from 'node:test';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { InvalidArgumentError } from '../../core/errors.ts';
import { startFakeServer } from './sdk-shaped-server.ts';
import { TinkerClient } from './tinker-client.ts';
import { checkOptions } from './tinker-options.ts';
import { TinkerPolicy } from './tinker-policy.ts';

test('the session heartbeat runs every heartbeatMs with the key, and stops when the server says the session ended (410)', async () => {
  const server = await startFakeServer({
    heartbeatStatus: 410,
    clientConfig: { fwdbwd_max_chunk_len: 7, proto_compress_fwdbwd: false, unknown_flag: 1 },
  });
  try {
    const client = new TinkerClient({ baseUrl: server.baseUrl, apiKey: 'tml-secret', heartbeatMs: 20 });
    await client.connect();
    assert.equal(client.config.fwdbwdMaxChunkLen, 7);
    assert.equal(client.config.fwdbwdMaxChunkBytes, 5_000_000, 'absent flags keep the SDK defaults');
    await new Promise((resolve) => setTimeout(resolve, 150));
    const beats = server.log.filter((entry) => entry.path === '/api/v1/session_heartbeat');
    assert.equal(beats.length, 1, 'one beat, answered 410, then none');
    assert.deepEqual(beats[0]?.body, { session_id: 'sess', type: 'session_heartbeat' });
    assert.equal(beats[0]?.headers['x-api-key'], 'tml-secret');
    assert.equal(beats[0]?.headers['x-stainless-retry-count'], '0');
    client.close();
  } finally {
    await server.close();
  }
});

test('a key the SDK would refuse, a TTL out of the server range and an unknown wire are refused before any request', () => {
  assert.throws(() => checkOptions({ baseModel: 'm', apiKey: 'sk-123' }), /must start with "tml-"/);
  checkOptions({ baseModel: 'm', apiKey: 'tml-abc' });
  assert.throws(() => checkOptions({ baseModel: 'm', samplerTtlSeconds: 60 }), /from 3600/);
  assert.throws(() => checkOptions({ baseModel: 'm', wire: 'grpc' as never }), InvalidArgumentError);
});

test("wire 'json' (SkyRL 0.3.0): JSON forward_backward, /forward to score, restore by create_model + load_weights(seq 1), clipping refused", async () => {
  const server = await startFakeServer({ json: true });
  const options = {
    baseUrl: server.baseUrl,
    baseModel: 'base',
    tokenizer: byteTokenizer,
    heartbeatMs: 0,
    environment: {},
    wire: 'json' as const,
  };
  const policy = await TinkerPolicy.create(options);
  try {
    assert.equal(policy.capabilities.gradientClipping, false);
    await policy.logprobs({ sequences: [[1, 2, 3]] });
    const loss = {
      name: 'sft',
      dependsOnCurrent: false,
      compute: () => ({ loss: 0, gradLogprobs: [new Float32Array([0, -1, -1])], metrics: {} }),
    };
    await policy.trainStep({ sequences: [[1, 2, 3]] }, loss, { learningRate: 0.01 });
    await assert.rejects(policy.optimStep({ learningRate: 0.01, maxGradNorm: 1 }), /ignores grad_clip_norm/);
    const state = await policy.saveState();
    await policy.loadState(state);
    const sent = server.log
      .filter((entry) => entry.path !== '/api/v1/retrieve_future')
      .map((entry) => entry.path.replace('/api/v1/', ''));
    assert.deepEqual(sent.slice(3), [
      'forward',
      'forward_backward',
      'optim_step',
      'save_weights',
      'create_model',
      'load_weights',
      'unload_model',
    ]);
    const load = server.log.find((entry) => entry.path === '/api/v1/load_weights')?.body;
    assert.deepEqual(load, {
      model_id: 'sess:train:1',
      seq_id: 1,
      path: load?.path,
      optimizer: true,
      type: 'load_weights',
    });
    const backward = server.log.find((entry) => entry.path === '/api/v1/forward_backward')?.body;
    assert.equal((backward?.forward_backward_input as { loss_fn: string } | undefined)?.loss_fn, 'cross_entropy');
    assert.deepEqual(server.refusals, []);
  } finally {
    await policy.close();
    await server.close();
  }
});
