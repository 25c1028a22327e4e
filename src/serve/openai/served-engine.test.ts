import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tinyChatmlFiles, tinyChatmlFormat } from '../../chat/tiny-chatml.ts';
import { saveCheckpoint } from '../../model/checkpoint.ts';
import { TransformerModel } from '../../model/model.ts';
import { loadServedPolicy } from './policy-server.ts';

test("serve-policy's engine: auto generates on onnxruntime for a real model's checkpoint, on jax-js for a byte model; both greedy-equal", async () => {
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
    const onnx = await loadServedPolicy(join(dir, 'real'));
    const jax = await loadServedPolicy(join(dir, 'real'), { engine: 'jax' });
    assert.equal(onnx.engine, 'onnx');
    assert.equal(jax.engine, 'jax');
    assert.equal((await loadServedPolicy(join(dir, 'byte'))).engine, 'jax');
    const options = {
      temperature: 0,
      topP: 1,
      stopTokens: [2],
      stopStrings: [],
      seed: 0,
      maxNewTokens: 6,
      onToken: () => {},
    };
    const prompt = onnx.chatFormat!.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }).tokens;
    const [fromOnnx] = await onnx.generate([prompt], options);
    const [fromJax] = await jax.generate([prompt], options);
    assert.deepEqual(fromOnnx!.tokens, fromJax!.tokens);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
