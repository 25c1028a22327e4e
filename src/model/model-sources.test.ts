import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointError, ModelNotFoundError, UnknownNameError } from '../core/errors.ts';
import {
  ModelPullError,
  describeModel,
  loadModelCheckpoint,
  modelCacheDir,
  pullModel,
  pulledModelPaths,
  resolveModelSource,
  sameModel,
} from './model-sources.ts';
import { modelConfigSchema } from './config.ts';
import { saveCheckpoint } from './checkpoint.ts';
import { initHostParams } from './params.ts';

test('the cache is $AGENTRL_CACHE/models, else ~/.cache/agentrl/models', () => {
  assert.equal(modelCacheDir({ AGENTRL_CACHE: '/data/agentrl' }), join('/data/agentrl', 'models'));
  assert.match(modelCacheDir({}), /\.cache[/\\]agentrl[/\\]models$/);
});

test('--model resolves a folder, a .gguf file, or a pulled known model; an unpulled one says to pull it', async () => {
  const cache = await mkdtemp(join(tmpdir(), 'agentrl-models-'));
  try {
    await writeFile(join(cache, 'config.json'), '{}');
    assert.deepEqual(resolveModelSource(cache, cache), { kind: 'folder', path: cache });
    assert.deepEqual(resolveModelSource(join(cache, 'config.json'), cache), { kind: 'folder', path: cache });
    const file = join(cache, 'x.gguf');
    await writeFile(file, 'GGUF');
    assert.deepEqual(resolveModelSource(file, cache), { kind: 'gguf', path: file });
    assert.throws(
      () => resolveModelSource('smollm2-135m-instruct', cache),
      (error: unknown) =>
        error instanceof ModelNotFoundError &&
        error instanceof CheckpointError &&
        error.code === 'MODEL_NOT_FOUND' &&
        /is not pulled yet .*; run: agentrl models pull smollm2-135m-instruct$/.test(error.message),
    );
    const { folder, gguf } = pulledModelPaths('smollm2-135m-instruct', cache);
    await mkdir(folder);
    await writeFile(gguf, 'GGUF');
    await writeFile(join(folder, 'tokenizer.json'), '{}');
    assert.deepEqual(resolveModelSource('smollm2-135m-instruct', cache), { kind: 'gguf', path: gguf });
    assert.deepEqual(resolveModelSource(folder, cache), { kind: 'gguf', path: gguf }, "the pulled model's folder");
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});

test('a model argument that names nothing usable says what a model is and how to pull one', async () => {
  const cache = await mkdtemp(join(tmpdir(), 'agentrl-models-'));
  const refused = (spec: string, pattern: RegExp, type: new (...args: never[]) => Error = ModelNotFoundError) =>
    assert.throws(
      () => resolveModelSource(spec, cache),
      (error: unknown) => error instanceof type && pattern.test(error.message),
      spec,
    );
  try {
    const knownHint = /known models: smollm2-135m-instruct \(fetch one with: agentrl models pull <name>/;
    refused('no-such-model', knownHint);
    refused('smollm2', /did you mean smollm2-135m-instruct\?/);
    refused(
      join(cache, 'missing'),
      /missing: no such file or folder; a model is a Hugging Face model folder, an agentrl checkpoint folder, a \.gguf file or a pulled model name/,
    );
    refused('model.gguf', /model\.gguf: no such file or folder/);
    refused(cache, /not a model folder: no config\.json .* and no \.gguf file/, CheckpointError);
    await writeFile(join(cache, 'notes.txt'), 'hello');
    refused(join(cache, 'notes.txt'), /notes\.txt: a file that is not a GGUF/, CheckpointError);
    refused('/dev/null', /\/dev\/null: not a regular file or folder/, CheckpointError);
    await writeFile(join(cache, 'a.gguf'), 'GGUF');
    await writeFile(join(cache, 'b.gguf'), 'GGUF');
    refused(cache, /holds 2 \.gguf files \(a\.gguf, b\.gguf\); pass one of them/, CheckpointError);
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});

test('models pull: an unknown name lists the known ones; a missing Python/pip is one clear line', async () => {
  const cache = await mkdtemp(join(tmpdir(), 'agentrl-models-'));
  try {
    await assert.rejects(pullModel('gpt-5', { cacheDir: cache }), UnknownNameError);
    await assert.rejects(
      pullModel('smollm2-135m-instruct', { cacheDir: cache, python: join(cache, 'no-python') }),
      (error: unknown) =>
        error instanceof ModelPullError &&
        /no-python not found: agentrl models pull needs Python with pip \(set AGENTRL_PYTHON/.test(error.message) &&
        !error.message.includes('\n'),
    );
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});

test('--init takes a checkpoint folder or a known model name (loadModelCheckpoint)', async () => {
  const cache = await mkdtemp(join(tmpdir(), 'agentrl-models-'));
  try {
    const config = modelConfigSchema.parse({
      hiddenSize: 8,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 1,
      intermediateSize: 8,
      maxSeqLen: 16,
    });
    await saveCheckpoint(join(cache, 'policy'), { config, params: initHostParams(config, 1) });
    assert.deepEqual((await loadModelCheckpoint(join(cache, 'policy'), cache)).config, config);
    await assert.rejects(
      loadModelCheckpoint('smollm2-135m-instruct', cache),
      /agentrl models pull smollm2-135m-instruct/,
    );
  } finally {
    await rm(cache, { recursive: true, force: true });
  }
});

test('describeModel names the architecture and size; sameModel compares networks, a value head aside', () => {
  const llama = modelConfigSchema.parse({
    hiddenSize: 8,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 1,
    intermediateSize: 8,
  });
  assert.equal(describeModel(llama), 'LlamaForCausalLM: 2 layers, hidden size 8, 2 heads (1 kv), vocabulary 272');
  assert.ok(sameModel(llama, { ...llama, valueHead: true, maxSeqLen: 1024 }));
  assert.ok(!sameModel(llama, { ...llama, numLayers: 3 }));
  assert.ok(!sameModel(llama, { ...llama, attentionBias: true }), 'Qwen2 biases: another family');
  assert.match(describeModel({ ...llama, attentionBias: true }), /^Qwen2ForCausalLM: /);
});
