/**
 * OpenAIPolicy against a real OpenAI-compatible server: agentrl's own `serve-policy` serving a
 * tiny random built-in model over HTTP on 127.0.0.1. The policy contract holds end to end, and a
 * generation through the server is the model's own generation.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { renderGenerationPrompt } from '../chat/chat-template.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { startPolicyServer, type PolicyServer } from '../serve/openai/policy-server.ts';
import { BuiltinPolicy } from './builtin-policy.ts';
import { policyContract } from './contract.ts';
import { OpenAIPolicy } from './openai-policy.ts';
import { at } from '../core/indexing.ts';

const tiny = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 2,
  intermediateSize: 64,
  maxSeqLen: 128,
};

describe('OpenAIPolicy → serve-policy (tiny random built-in model, real HTTP)', () => {
  let server: PolicyServer;
  let model: TransformerModel;
  let policy: OpenAIPolicy;
  before(async () => {
    model = await TransformerModel.create(tiny, { seed: 7 });
    server = await startPolicyServer({
      policy: new BuiltinPolicy({ model }),
      modelName: 'tiny',
      port: 0,
      batchWindowMs: 5,
    });
    policy = new OpenAIPolicy({
      baseURL: `${server.url}/v1`,
      model: 'tiny',
      contextWindow: tiny.maxSeqLen,
      environment: {},
    });
  });
  after(() => server.close());

  policyContract('openai (serve-policy)', () => policy);

  test('a generation through the server is the model’s own generation: same ids, same log-probs (the stop token, which servers leave out of log-probs, gets 0)', async () => {
    const direct = new BuiltinPolicy({ model });
    for (const [question, temperature] of [
      ['Say hi.', 0],
      ['Count to three.', 0.8],
      ['What is 2 + 2?', 1],
    ] as const) {
      const prompt = renderGenerationPrompt([{ role: 'user', content: question }]).tokens;
      const request = { prompt, maxNewTokens: 24, temperature, seed: 3 };
      const [remote, local] = [await policy.generate(request), await direct.generate(request)];
      assert.deepEqual(remote.tokens, local.tokens, `${question}: same ids`);
      assert.equal(remote.text, local.text);
      assert.equal(remote.finishReason, local.finishReason);
      const sampled = local.finishReason === 'stop' ? local.tokens.length - 1 : local.tokens.length;
      for (let i = 0; i < sampled; i++)
        assert.ok(
          Math.abs(at(remote.logprobs, i) - at(local.logprobs, i)) < 1e-5,
          `${question}: token ${i} log-prob ${remote.logprobs[i]} vs ${local.logprobs[i]}`,
        );
      if (sampled < local.tokens.length) assert.equal(remote.logprobs.at(-1), 0);
    }
  });
});
