/**
 * The KL / DPO reference as a sampling client (`compute_logprobs`: one asample with prompt log-probs):
 * the SDK's answer has one entry per prompt token, null first; SkyRL 0.3.0 leaves the first out
 * (check:tinker's train run stopped on it). Both score the same, index 0 = 0 (agentrl's alignment).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startFakeServer } from './sdk-shaped-server.ts';
import { TinkerReference } from './tinker-reference.ts';

for (const promptLogprobsWithoutFirst of [false, true]) {
  test(`reference log-probs from ${promptLogprobsWithoutFirst ? "SkyRL 0.3.0's n − 1 entries" : "the SDK's n entries (null first)"}`, async () => {
    const server = await startFakeServer({ promptLogprobsWithoutFirst });
    const reference = await TinkerReference.create({
      baseUrl: server.baseUrl,
      baseModel: 'base',
      heartbeatMs: 0,
      environment: {},
    });
    try {
      const [scored] = await reference.logprobs({ sequences: [[5, 6, 7, 8]] });
      assert.deepEqual([...(scored ?? [])], [0, -0.25, -0.5, -0.75]);
      const sample = server.log.find((entry) => entry.path === '/api/v1/asample');
      assert.deepEqual(
        [
          sample?.body.prompt_logprobs,
          (sample?.body.sampling_params as { max_tokens: number } | undefined)?.max_tokens,
        ],
        [true, 1],
      );
      assert.deepEqual(server.refusals, []);
    } finally {
      await reference.close();
      await server.close();
    }
  });
}
