/**
 * What serve-policy owns and what it leaves running, over real HTTP: `close()` releases a model the
 * server loaded itself (never a policy the caller passed in), and a client that disconnects
 * mid-generation — streamed or not — stops its batch instead of leaving it running for nobody,
 * with the server answering the next request as before.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { saveCheckpoint } from '../../model/checkpoint.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import type { GenerateBatchOptions, GenerateRequest, Generation, Policy } from '../../policy/types.ts';
import { startPolicyServer, type PolicyServer } from './policy-server.ts';
import { GenerationAbandonedError } from './served-policy-errors.ts';
import { talkativeModel } from './streaming-test-fixture.ts';

const tiny = {
  vocabSize: 264,
  hiddenSize: 16,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 32,
  maxSeqLen: 64,
};

/** Counts the calls of `model.release` (the onnxruntime sessions' owner), still releasing. */
function spyOnRelease(model: TransformerModel): { calls: number } {
  const spy = { calls: 0 };
  const release = model.release.bind(model);
  model.release = async () => {
    spy.calls++;
    await release();
  };
  return spy;
}

test('close() releases the model the server loaded from `model`, once; a policy passed in stays the caller’s', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-serve-release-'));
  try {
    const created = await TransformerModel.create(tiny, { seed: 3 });
    await saveCheckpoint(join(dir, 'ckpt'), { config: created.config, params: await created.hostParams() });
    const loaded = await startPolicyServer({ model: join(dir, 'ckpt'), modelName: 'tiny', port: 0 });
    assert.ok(loaded.policy instanceof BuiltinPolicy);
    const released = spyOnRelease(loaded.policy.model);
    await Promise.all([loaded.close(), loaded.close()]);
    await loaded.close();
    assert.equal(released.calls, 1, 'the loaded model is released once');

    const mine = new BuiltinPolicy({ model: created });
    const kept = spyOnRelease(created);
    const given = await startPolicyServer({ policy: mine, modelName: 'tiny', port: 0 });
    await given.close();
    assert.equal(kept.calls, 0, 'the caller’s policy is not released');
    const after = await mine.generate({ prompt: [byteTokenizer.specialTokens.bos], maxNewTokens: 3, seed: 1 });
    assert.equal(after.tokens.length > 0, true, 'and still generates');
    await created.release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A policy that streams id 'a' per step (a timer tick each) up to maxNewTokens; each batch's outcome. */
function endlessPolicy(): Policy & { outcomes: Promise<unknown>[]; handed: number[] } {
  const [a] = byteTokenizer.encode('a');
  const outcomes: Promise<unknown>[] = [];
  const handed: number[] = [];
  const generateBatch = (requests: readonly GenerateRequest[], { onToken }: GenerateBatchOptions = {}) => {
    const batch = handed.push(0) - 1;
    const run = (async (): Promise<Generation[]> => {
      const tokens: number[] = [];
      for (let step = 0; step < (requests[0]?.maxNewTokens ?? 0); step++) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        tokens.push(a ?? 0);
        for (let row = 0; row < requests.length; row++) onToken?.(row, a ?? 0, -1);
        handed[batch] = step + 1;
      }
      const text = 'a'.repeat(tokens.length);
      return requests.map(() => ({ tokens, logprobs: tokens.map(() => -1), text, finishReason: 'length' as const }));
    })();
    outcomes.push(
      run.then(
        () => 'finished',
        (error: unknown) => error,
      ),
    );
    return run;
  };
  return {
    tokenizer: byteTokenizer,
    contextWindow: 1 << 16,
    outcomes,
    handed,
    generateBatch,
    generate: async (request) => (await generateBatch([request]))[0] as Generation,
  };
}

/** Posts a chat request and disconnects once `ready()` says so (streamed: after the first chunk). */
async function postThenLeave(url: string, body: Record<string, unknown>, ready: () => Promise<void>): Promise<void> {
  const leave = new AbortController();
  const response = fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'endless', messages: [{ role: 'user', content: 'go' }], ...body }),
    signal: leave.signal,
  });
  if (body.stream === true) {
    const reader = (await response).body!.getReader();
    await reader.read(); // the first chunk arrived: the generation is running
    await ready();
    leave.abort();
    await reader.cancel().catch(() => {});
    return;
  }
  await ready();
  leave.abort();
  await response.catch(() => {});
}

describe('a client that disconnects mid-generation stops its batch (real HTTP)', () => {
  const policy = endlessPolicy();
  let server: PolicyServer;
  before(async () => {
    server = await startPolicyServer({ policy, modelName: 'endless', port: 0, batchWindowMs: 1 });
  });
  after(() => server.close());

  const sampledSome = (batch: number) => async () => {
    while ((policy.handed[batch] ?? 0) < 3) await new Promise((resolve) => setTimeout(resolve, 1));
  };

  test('streamed: the generation ends with a GenerationAbandonedError long before its 20,000 tokens', async () => {
    await postThenLeave(server.url, { stream: true, max_tokens: 20_000 }, sampledSome(0));
    const outcome = await policy.outcomes[0];
    assert.ok(outcome instanceof GenerationAbandonedError, `the batch ended by abandonment, got ${String(outcome)}`);
    assert.ok((policy.handed[0] ?? 0) < 20_000);
  });

  test('not streamed: the same, and the server answers the next request', async () => {
    await postThenLeave(server.url, { max_tokens: 20_000 }, sampledSome(1));
    const outcome = await policy.outcomes[1];
    assert.ok(outcome instanceof GenerationAbandonedError, `the batch ended by abandonment, got ${String(outcome)}`);
    const next = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'endless', messages: [{ role: 'user', content: 'go' }], max_tokens: 4 }),
    });
    assert.equal(next.status, 200);
    const reply = (await next.json()) as { choices: { message: { content: string } }[] };
    assert.equal(reply.choices[0]?.message.content, 'aaaa');
  });
});

test('the built-in model: a streamed reply whose client left stops sampling (its generateBatch rejects)', async () => {
  const model = await talkativeModel(1024);
  const builtin = new BuiltinPolicy({ model });
  const outcomes: Promise<unknown>[] = [];
  let sampled = 0;
  const watched: Policy = {
    tokenizer: builtin.tokenizer,
    contextWindow: builtin.contextWindow,
    generate: (request) => builtin.generate(request),
    generateBatch: (requests, options) => {
      const run = builtin.generateBatch(requests, {
        onToken: (row, token, logprob) => {
          sampled++;
          options?.onToken?.(row, token, logprob);
        },
      });
      outcomes.push(
        run.then(
          () => 'finished',
          (error: unknown) => error,
        ),
      );
      return run;
    },
  };
  const server = await startPolicyServer({ policy: watched, modelName: 'endless', port: 0, batchWindowMs: 1 });
  try {
    await postThenLeave(server.url, { stream: true, max_tokens: 1000 }, async () => {});
    const outcome = await outcomes[0];
    assert.ok(outcome instanceof GenerationAbandonedError, `sampling ended by abandonment, got ${String(outcome)}`);
    assert.ok(sampled < 1000, `${sampled} of 1000 ids sampled`);
  } finally {
    await server.close();
    await model.release();
  }
});
