/**
 * An OpenAI-compatible server as the gateway's sampler: `OpenAIPolicy({ returnTokenIds: true })`
 * in front of a real `serve-policy` (the built-in model over HTTP on 127.0.0.1; it returns each
 * sampled token's bytes, which OpenAIPolicy maps back to ids — vLLM answers `token_id:<id>`).
 * What the gateway records is what the upstream sampled, and the recording trains (one `runRl`
 * iteration through `gatewayCollect`).
 *
 * Weight sync: the trainer updates its own policy, never the upstream. Here the upstream serves
 * the very `TransformerModel` the trainer updates (serve-policy in the trainer's process), so
 * they stay in sync; an upstream in another process (vLLM, `agentrl serve-policy`) samples from
 * the weights it loaded until the user reloads it (`policy.save(dir)` then restart / reload).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { at } from '../../core/indexing.ts';
import type { Trajectory } from '../../core/types.ts';
import { renderGenerationPrompt } from '../../chat/chat-template.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { byteTokenizer } from '../../chat/tokenizer.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import { OpenAIPolicy } from '../../policy/openai-policy.ts';
import type { Generation, Policy } from '../../policy/types.ts';
import { makeBanditEnv } from '../../train/bandit-test-fixture.ts';
import { runRl } from '../../train/rl.ts';
import { startPolicyServer } from '../openai/policy-server.ts';
import { gatewayCollect } from './gateway-collect.ts';
import { startGateway } from './gateway.ts';

const tiny = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 2,
  intermediateSize: 64,
  maxSeqLen: 256,
};
const config = {
  algo: 'grpo' as const,
  iterations: 1,
  tasksPerIteration: 1,
  groupSize: 4,
  maxTurns: 1,
  maxNewTokens: 8,
  validationEpisodes: 1,
  learningRate: 3e-2,
  seed: 3,
};
const end = byteTokenizer.specialTokens.end;

/** Each recorded trajectory starts with the prompt, and its trained ids and log-probs are one of the upstream's samples. */
function assertRecordedUpstreamSamples(
  collected: readonly Trajectory[],
  sampledUpstream: readonly Generation[],
  prompt: readonly number[],
): void {
  for (const trajectory of collected) {
    assert.deepEqual(trajectory.tokens.slice(0, prompt.length), prompt);
    const ids = trajectory.tokens.filter((_, i) => trajectory.lossMask[i] === 1);
    const logprobs = trajectory.logprobs.filter((_, i) => trajectory.lossMask[i] === 1);
    const row = sampledUpstream.find((candidate) => candidate.tokens.join() === ids.join());
    assert.ok(row !== undefined, `the recorded ids ${ids.join(',')} are an upstream sample`);
    row.logprobs.forEach((logprob, i) => {
      // Servers leave the final stop token out of `logprobs`; OpenAIPolicy gives it 0.
      const expected = i === row.tokens.length - 1 && row.tokens[i] === end ? 0 : logprob;
      assert.ok(
        Math.abs(at(logprobs, i, 'recorded logprobs') - expected) < 1e-5,
        `token ${i}: recorded ${logprobs[i]}, upstream ${expected}`,
      );
    });
  }
}

describe('gateway → OpenAIPolicy → serve-policy (tiny built-in model, real HTTP)', () => {
  test('the recorded ids and log-probs are what the upstream sampled, and the recording trains', async () => {
    const model = await TransformerModel.create(tiny, { seed: 5 });
    const sampledUpstream: Generation[] = [];
    const served = new BuiltinPolicy({ model });
    const observed: Policy = {
      tokenizer: served.tokenizer,
      contextWindow: served.contextWindow,
      generate: (request) => served.generate(request),
      generateBatch: async (requests, options) => {
        const generations = await served.generateBatch(requests, options);
        sampledUpstream.push(...generations);
        return generations;
      },
    };
    const upstream = await startPolicyServer({
      policy: observed,
      modelName: 'tiny',
      port: 0,
      batchWindowMs: 1,
    });
    const sampler = new OpenAIPolicy({
      baseURL: `${upstream.url}/v1`,
      model: 'tiny',
      returnTokenIds: true,
      contextWindow: tiny.maxSeqLen,
      environment: {},
    });
    const gateway = await startGateway({ sampler });
    const policy = new BuiltinPolicy({ model });
    const reference = new BuiltinPolicy({
      model: await TransformerModel.fromParams(model.config, await model.hostParams()),
    });
    const before = await model.hostParams();
    const collected: Trajectory[] = [];
    try {
      const result = await runRl({
        policy,
        reference,
        env: makeBanditEnv,
        config,
        collect: gatewayCollect({
          gateway,
          agent: async (run) => {
            const client = new OpenAI({
              baseURL: run.baseURL,
              apiKey: run.apiKey,
              defaultHeaders: run.headers,
              maxRetries: 0,
            });
            const completion = await client.chat.completions.create({
              model: 'gpt-4o-mini',
              messages: [{ role: 'user', content: 'Say something.' }],
              max_tokens: 8,
            });
            return at(completion.choices, 0, 'choices').message.content ?? '';
          },
          reward: ({ output, sample }) => (output.length + sample) % 3, // any spread, so the group has an advantage
          onCollected: ({ trajectories }) => collected.push(...trajectories),
        }),
      });
      assert.equal(collected.length, config.groupSize);
      assert.equal(sampledUpstream.length, config.groupSize, 'one upstream generation per agent call');
      const prompt = renderGenerationPrompt([{ role: 'user', content: 'Say something.' }]).tokens;
      assertRecordedUpstreamSamples(collected, sampledUpstream, prompt);
      assert.equal(result.history.length, 1);
      const after = await model.hostParams();
      const moved = [...before.keys()].filter((name) =>
        before.get(name)!.data.some((value, i) => value !== after.get(name)!.data[i]),
      );
      assert.ok(moved.length > 0, 'the update changed the weights');
      // The upstream serves the trained model object: it now samples from the updated weights.
      const request = { prompt, maxNewTokens: 8, temperature: 0 };
      assert.deepEqual((await sampler.generate(request)).tokens, (await policy.generate(request)).tokens);
    } finally {
      await gateway.close();
      await upstream.close();
    }
  });
});
