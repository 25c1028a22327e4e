import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { saveCheckpoint } from '../../model/checkpoint.ts';
import type { BaseQuantization } from '../../model/model-options.ts';
import { ScriptedPolicy } from '../../policy/scripted-policy.ts';
import { loadServedPolicy, startPolicyServer } from './policy-server.ts';

test('loadServedPolicy / startPolicyServer: baseQuantization reaches the loaded model; a bad value is refused before the checkpoint is read', async () => {
  await assert.rejects(
    loadServedPolicy('/nonexistent/agentrl-checkpoint', { baseQuantization: 'int3' as BaseQuantization }),
    (error: unknown) => error instanceof InvalidArgumentError && /float32, int8, int4; got int3/.test(error.message),
  );
  await assert.rejects(
    startPolicyServer({
      policy: new ScriptedPolicy({ reply: ['x'] }),
      baseQuantization: 'int8' as never,
      modelName: 'scripted',
      port: 0,
    }),
    (error: unknown) => error instanceof InvalidArgumentError && /a policy passed in keeps its own/.test(error.message),
  );
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-served-quantized-'));
  try {
    const model = await TransformerModel.create({
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 2,
      intermediateSize: 32,
      maxSeqLen: 64,
    });
    await saveCheckpoint(dir, { config: model.config, params: await model.hostParams() });
    await model.release();
    const plain = await loadServedPolicy(dir);
    assert.equal(plain.model.baseQuantization, 'float32', 'default');
    await plain.model.release();
    const server = await startPolicyServer({ model: dir, baseQuantization: 'int8', modelName: 'tiny', port: 0 });
    try {
      assert.equal((server.policy as typeof plain).model.baseQuantization, 'int8');
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: 6, seed: 2 }),
      });
      assert.equal(response.status, 200);
      const reply = (await response.json()) as { usage: { completion_tokens: number } };
      assert.ok(reply.usage.completion_tokens > 0 && reply.usage.completion_tokens <= 6);
    } finally {
      await server.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
