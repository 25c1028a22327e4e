import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tinyChatmlFiles, tinyChatmlFormat } from '../../chat/tiny-chatml.ts';
import { at } from '../../core/indexing.ts';
import { generate } from '../../engine/generate.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { saveCheckpoint } from '../../model/checkpoint.ts';
import { policyGenerator } from './policy-generator.ts';
import { loadServedPolicy } from './policy-server.ts';

test("serve-policy loads a real model's checkpoint (its own chat format) and a byte model on the engine; its policy, the servers' generator, samples what generate() samples", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-served-engine-'));
  try {
    const config = {
      vocabSize: 264,
      hiddenSize: 16,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 1,
      intermediateSize: 32,
      maxSeqLen: 64,
    };
    const model = await TransformerModel.create(config, { seed: 2 });
    await saveCheckpoint(join(dir, 'real'), {
      config: model.config,
      params: await model.hostParams(),
      tokenizer: tinyChatmlFormat().tokenizer,
      chatFiles: tinyChatmlFiles(),
    });
    await saveCheckpoint(join(dir, 'byte'), { config: model.config, params: await model.hostParams() });
    const real = await loadServedPolicy(join(dir, 'real'));
    const byte = await loadServedPolicy(join(dir, 'byte'));
    assert.equal(real.chatFormat?.name !== undefined, true, 'the real checkpoint keeps its chat format');
    assert.equal(byte.chatFormat, undefined);
    const prompt = tinyChatmlFormat().render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }).tokens;
    const options = { temperature: 0.8, topP: 1, stopTokens: [2], stopStrings: [], seed: 3, maxNewTokens: 6 };
    for (const served of [real, byte]) {
      const streamed: number[] = [];
      const [row] = await policyGenerator(served)([prompt], {
        ...options,
        onToken: (_row, token) => streamed.push(token),
      });
      const [direct] = await generate(model, [prompt], { ...options, maxTokenId: served.tokenizer.vocabSize });
      assert.deepEqual(at([row], 0)?.tokens, at([direct], 0)?.tokens);
      assert.deepEqual(streamed, row?.tokens, 'every sampled id streamed, in order');
      await served.model.release();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
