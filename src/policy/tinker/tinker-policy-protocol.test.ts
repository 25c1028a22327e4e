/**
 * TinkerPolicy against a loopback server that answers as the SDK 0.38 protocol says
 * (./sdk-shaped-server.ts) — what it sends, in what order, how many calls. Each test names the
 * defect of issue 29 it pins (all failed before the client followed the SDK).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { TokenLoss } from '../../core/loss.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { at } from '../../core/indexing.ts';
import type { ServerComputableLoss } from './server-loss.ts';
import { type FakeServer, startFakeServer } from './sdk-shaped-server.ts';
import { TinkerPolicy } from './tinker-policy.ts';
import { TinkerReference } from './tinker-reference.ts';

async function withPolicy(
  run: (policy: TinkerPolicy, server: FakeServer) => Promise<void>,
  serverOptions: Parameters<typeof startFakeServer>[0] = {},
): Promise<void> {
  const server = await startFakeServer(serverOptions);
  const policy = await TinkerPolicy.create({
    baseUrl: server.baseUrl,
    baseModel: 'base',
    tokenizer: byteTokenizer,
    heartbeatMs: 0,
    environment: {},
  });
  try {
    await run(policy, server);
    assert.deepEqual(server.refusals, [], 'the server refused nothing');
  } finally {
    await policy.close();
    await server.close();
  }
}

const paths = (server: FakeServer, from = 0) =>
  server.log
    .slice(from)
    .filter((entry) => entry.path !== '/api/v1/retrieve_future')
    .map((entry) => entry.path.replace('/api/v1/', ''));

/** A loss of per-token log-probs: L = Σ_t c_t·logp_t (gradient c), independent of the current log-probs. */
const linearLoss = (coefficients: number[][]): TokenLoss => ({
  name: 'linear',
  dependsOnCurrent: false,
  compute: ({ logprobs }) => ({
    loss: logprobs.reduce(
      (sum, row, s) => sum + row.reduce((acc, value, t) => acc + value * (coefficients[s]?.[t] ?? 0), 0),
      0,
    ),
    gradLogprobs: coefficients.map((row) => new Float32Array(row)),
    metrics: {},
  }),
});

test('startup is the SDK handshake: client/config, create_session, create_model with lora_config and optimizer_config', async () => {
  await withPolicy(async (policy, server) => {
    assert.deepEqual(paths(server), ['client/config', 'create_session', 'create_model']);
    assert.deepEqual(at(server.log, 2).body, {
      session_id: 'sess',
      model_seq_id: 0,
      base_model: 'base',
      lora_config: { rank: 8, seed: 0, train_unembed: true, train_mlp: true, train_attn: true },
      optimizer_config: { type: 'adamw' },
      type: 'create_model',
    });
    assert.equal(policy.modelId, 'sess:train:0');
    assert.equal(policy.samplerMatchesTrainer, false);
    // The future is polled with the SDK's headers.
    const poll = server.log.find((entry) => entry.path === '/api/v1/retrieve_future');
    assert.equal(poll?.headers['x-tinker-request-type'], 'CreateModel');
    assert.equal(poll?.headers['x-tinker-request-iteration'], '0');
    assert.deepEqual(poll?.body, { request_id: 'f0', allow_metadata_only: true });
  });
});

test('a GRPO batch of 2 prompts × 4 rows is 2 asample requests with num_samples 4, on a sampling session (was 8 requests)', async () => {
  await withPolicy(async (policy, server) => {
    const requests = [
      [1, 2],
      [3, 4],
    ].flatMap((prompt) => Array.from({ length: 4 }, () => ({ prompt, maxNewTokens: 3, seed: 5 })));
    const generations = await policy.generateBatch(requests);
    assert.equal(generations.length, 8);
    const samples = server.log.filter((entry) => entry.path === '/api/v1/asample');
    assert.deepEqual(
      samples.map((entry) => entry.body.num_samples),
      [4, 4],
    );
    assert.deepEqual(
      samples.map((entry) => entry.body.seq_id),
      [0, 1],
    );
    assert.equal(at(samples, 0).headers['x-tinker-sampling-backpressure'], '1');
    assert.equal(at(samples, 0).body.sampling_session_id, 'ss0');
    assert.equal(
      new Set(generations.slice(0, 4).map((generation) => generation.text)).size,
      4,
      "the group's samples differ",
    );
    const save = server.log.find((entry) => entry.path === '/api/v1/save_weights_for_sampler');
    assert.equal(save?.body.ttl_seconds, 3600);
    assert.equal(save?.body.kind, 'snapshot');
  });
});

test('logprobs is a forward_only protobuf forward_backward — no /forward; an SFT-like loss is ONE round trip', async () => {
  await withPolicy(async (policy, server) => {
    const scored = await policy.logprobs({ sequences: [[1, 2, 3]] });
    assert.deepEqual(Array.from(at(scored, 0)), [0, Math.fround(-0.1), Math.fround(-0.2)]);
    const before = server.log.length;
    await policy.forwardBackward({ sequences: [[1, 2, 3]] }, linearLoss([[0, -0.5, -0.5]]));
    assert.deepEqual(paths(server, before), ['forward_backward']);
    const sent = server.log.findLast((entry) => entry.path === '/api/v1/forward_backward');
    assert.equal(sent?.body.loss_fn, 'cross_entropy');
    assert.equal(sent?.body.forward_only, false);
    assert.equal(paths(server).includes('forward'), false);
  });
});

test('a mixed-sign custom loss: forward, then importance_sampling with advantages −dL/dlogp at the current log-probs', async () => {
  await withPolicy(async (policy, server) => {
    const before = server.log.length;
    await policy.forwardBackward({ sequences: [[1, 2, 3]] }, linearLoss([[0, -1, 2]]));
    assert.deepEqual(paths(server, before), ['forward_backward', 'forward_backward']);
    const [forward, backward] = server.log.slice(before).filter((entry) => entry.path === '/api/v1/forward_backward');
    assert.equal(forward?.body.forward_only, true);
    assert.equal(backward?.body.loss_fn, 'importance_sampling');
    const inputs = ((backward?.body.data ?? []) as { inputs: Record<string, number[]> }[])[0]?.inputs;
    assert.deepEqual(inputs?.advantages, [1, -2]);
    assert.deepEqual(
      inputs?.logprobs?.map((x) => Math.round(x * 10) / 10),
      [-0.1, -0.2],
    );
  });
});

test('a loss the server computes (ppo) is ONE forward_backward with its clip config and the sampler log-probs', async () => {
  await withPolicy(async (policy, server) => {
    const loss: ServerComputableLoss = {
      ...linearLoss([[0, -1, 2]]),
      dependsOnCurrent: true,
      serverLoss: {
        lossFunction: 'ppo',
        advantages: [new Float32Array([0, 1, -1])],
        samplingLogprobs: [new Float32Array([0, -0.3, -0.4])],
        clip: { low: 0.8, high: 1.28 },
      },
    };
    const before = server.log.length;
    await policy.forwardBackward({ sequences: [[1, 2, 3]] }, loss);
    assert.deepEqual(paths(server, before), ['forward_backward']);
    const sent = server.log.findLast((entry) => entry.path === '/api/v1/forward_backward');
    assert.equal(sent?.body.loss_fn, 'ppo');
    assert.deepEqual(sent?.body.loss_fn_config, { clip_low_threshold: 0.8, clip_high_threshold: 1.28 });
  });
});

test('trainStep sends optim_step (with grad_clip_norm) before reading forward_backward, seq_ids 1, 2 in order', async () => {
  await withPolicy(
    async (policy, server) => {
      const report = await policy.trainStep({ sequences: [[1, 2, 3]] }, linearLoss([[0, -1, -1]]), {
        learningRate: 0.01,
        maxGradNorm: 1,
      });
      assert.equal(report.step, 1);
      assert.equal(report.gradNorm, 0.5);
      const optim = server.log.find((entry) => entry.path === '/api/v1/optim_step');
      assert.deepEqual(optim?.body, {
        model_id: 'sess:train:0',
        seq_id: 2,
        type: 'optim_step',
        adam_params: { learning_rate: 0.01, beta1: 0.9, beta2: 0.95, eps: 1e-8, weight_decay: 0, grad_clip_norm: 1 },
      });
      assert.equal(server.log.find((entry) => entry.path === '/api/v1/forward_backward')?.body.seq_id, 1);
    },
    { holdForwardBackwardForOptim: true },
  );
});

test('resume is a FRESH model whose first request is load_weights with optimizer; the old run is unloaded', async () => {
  await withPolicy(async (policy, server) => {
    await policy.trainStep({ sequences: [[1, 2, 3]] }, linearLoss([[0, -1, -1]]), { learningRate: 0.01 });
    const state = await policy.saveState();
    const before = server.log.length;
    await policy.loadState(state);
    assert.deepEqual(paths(server, before), ['load_weights', 'unload_model']);
    const load = at(server.log, before).body;
    assert.deepEqual(load, {
      session_id: 'sess',
      model_seq_id: 1,
      path: 'tinker://sess:train:0/weights/' + String(load.path).split('/').at(-1),
      optimizer: true,
      type: 'load_weights',
    });
    assert.equal(policy.modelId, 'sess:train:1');
    await policy.trainStep({ sequences: [[1, 2, 3]] }, linearLoss([[0, -1, -1]]), { learningRate: 0.01 });
    const restored = await TinkerPolicy.restore(
      { baseUrl: server.baseUrl, baseModel: 'base', heartbeatMs: 0, environment: {} },
      state,
    );
    assert.equal(restored.modelId, 'sess1:train:0');
    assert.deepEqual(paths(server).slice(-3), ['client/config', 'create_session', 'load_weights']);
    await restored.close();
  });
});

test('sampler weights: one save per optimizer step with a TTL, the previous deleted; the summary says what is kept', async () => {
  await withPolicy(async (policy, server) => {
    const request = { prompt: [1, 2], maxNewTokens: 2 };
    await policy.generateBatch([request]);
    await policy.generateBatch([request]);
    await policy.trainStep({ sequences: [[1, 2, 3]] }, linearLoss([[0, -1, -1]]), { learningRate: 0.01 });
    await policy.generateBatch([request]);
    await policy.save('/tmp/agentrl-tinker-storage-test');
    assert.equal(server.applied.save_weights_for_sampler, 2, 'saved once per step, not per call');
    const deletes = server.log.filter((entry) => entry.method === 'DELETE');
    assert.equal(deletes.length, 1);
    assert.match(
      at(deletes, 0).path,
      /^\/api\/v1\/training_runs\/sess%3Atrain%3A0\/checkpoints\/sampler_weights\/agentrl-step-0-/,
    );
    const summary = policy.storage.summary();
    assert.deepEqual(
      summary.kept.map((entry) => [entry.kind, entry.ttlSeconds]),
      [
        ['sampler_weights', 3600],
        ['weights', undefined],
      ],
    );
    assert.match(policy.storage.describe(), /2 checkpoints kept on the server, 1 stale sampler weights deleted/);
  });
});

test('the KL reference is a sampling client of the base model scoring prompt log-probs — no training run', async () => {
  const server = await startFakeServer({ clientConfig: { fwdbwd_max_chunk_len: 2 } });
  try {
    const reference = await TinkerReference.create({
      baseUrl: server.baseUrl,
      baseModel: 'base',
      heartbeatMs: 0,
      environment: {},
    });
    const scored = await reference.logprobs({
      sequences: [
        [1, 2, 3],
        [4, 5],
      ],
    });
    assert.deepEqual(
      scored.map((row) => Array.from(row)),
      [
        [0, -0.25, -0.5],
        [0, -0.25],
      ],
    );
    assert.deepEqual(paths(server), [
      'client/config',
      'create_session',
      'create_sampling_session',
      'asample',
      'asample',
    ]);
    assert.equal(server.log.find((entry) => entry.path === '/api/v1/create_sampling_session')?.body.base_model, 'base');
    const sample = server.log.find((entry) => entry.path === '/api/v1/asample')?.body;
    assert.equal(sample?.prompt_logprobs, true);
    assert.equal((sample?.sampling_params as { max_tokens: number } | undefined)?.max_tokens, 1);
    await reference.close();
    assert.deepEqual(server.refusals, []);
  } finally {
    await server.close();
  }
});

test("a large forward_backward is split by the server's fwdbwd_max_chunk_len, one seq_id per chunk, outputs in order", async () => {
  await withPolicy(
    async (policy, server) => {
      const sequences = [
        [1, 2],
        [1, 2, 3],
        [1, 2, 3, 4],
        [5, 6, 7, 8, 9],
      ];
      const scored = await policy.logprobs({ sequences });
      assert.deepEqual(
        scored.map((row) => row.length),
        [2, 3, 4, 5],
      );
      const chunks = server.log.filter((entry) => entry.path === '/api/v1/forward_backward');
      assert.deepEqual(
        chunks.map((entry) => [entry.body.seq_id, (entry.body.data as unknown[]).length]),
        [
          [1, 2],
          [2, 2],
        ],
      );
    },
    { clientConfig: { fwdbwd_max_chunk_len: 2 } },
  );
});

test('a reference from saveState bytes: a model made from them, its weights saved once for sampling; close deletes them, then unloads the model (SkyRL 0.3.0 samples a model_path only while its model is loaded)', async () => {
  await withPolicy(async (policy, server) => {
    await policy.trainStep({ sequences: [[1, 2, 3]] }, linearLoss([[0, -1, -1]]), { learningRate: 0.01 });
    const state = await policy.saveState();
    const before = server.log.length;
    const reference = await TinkerPolicy.reference(
      { baseUrl: server.baseUrl, baseModel: 'base', heartbeatMs: 0, environment: {} },
      state,
    );
    await reference.logprobs({ sequences: [[1, 2, 3]] });
    await reference.close();
    assert.deepEqual(paths(server, before).slice(0, -2), [
      'client/config',
      'create_session',
      'load_weights',
      'save_weights_for_sampler',
      'create_sampling_session',
      'asample',
    ]);
    assert.equal(paths(server, before).at(-1), 'unload_model');
    const save = server.log.find(
      (entry, index) => index >= before && entry.path === '/api/v1/save_weights_for_sampler',
    );
    assert.equal(save?.body.ttl_seconds, undefined, 'no TTL: the reference lasts the run');
    const deleted = server.log.findLast((entry) => entry.method === 'DELETE');
    assert.match(
      deleted?.path ?? '',
      /^\/api\/v1\/training_runs\/sess1%3Atrain%3A0\/checkpoints\/sampler_weights\/agentrl-reference-/,
    );
  });
});

test("a prompt carrying an id the server's model sampled beyond the tokenizer (a spare row) is sent as is, not refused", async () => {
  const spare = byteTokenizer.vocabSize + 3;
  await withPolicy(
    async (policy, server) => {
      const first = await policy.generate({ prompt: [1, 2, 3], maxNewTokens: 4 });
      assert.deepEqual(first.tokens, [spare, 65]);
      // Before: "prompt token id 266 is outside the vocabulary [0, 263)" on the episode's second turn.
      await policy.generate({ prompt: [1, 2, 3, ...first.tokens, 66], maxNewTokens: 4 });
      const prompts = server.log
        .filter((entry) => entry.path === '/api/v1/asample')
        .map((entry) => (entry.body.prompt as { chunks: { tokens: number[] }[] }).chunks[0]?.tokens);
      assert.deepEqual(prompts.at(-1), [1, 2, 3, spare, 65, 66]);
    },
    { sampledTokens: [spare, 65] },
  );
  await assert.rejects(
    withPolicy(async (policy) => {
      await policy.generate({ prompt: [1, -2], maxNewTokens: 1 });
    }),
    /prompt token id -2 is outside the vocabulary/,
  );
});
