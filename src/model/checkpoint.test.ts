import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../core/rng.ts';
import { CheckpointError } from '../core/errors.ts';
import { modelConfigSchema, parameterShapes, type HostParams, type ModelConfigInput } from './config.ts';
import { loadCheckpoint, saveCheckpoint, writeFileAtomic } from './checkpoint.ts';
import { toHfConfig, toHfTensors } from './hf-config.ts';
import { serializeSafetensors } from './safetensors.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { loadHfTokenizer } from '../chat/hf-tokenizer.ts';
import { chatTemplateJinja } from '../chat/chat-template.ts';

const small = (input: ModelConfigInput = {}) =>
  modelConfigSchema.parse({
    hiddenSize: 8,
    numLayers: 2,
    numHeads: 2,
    numKvHeads: 1,
    intermediateSize: 12,
    maxSeqLen: 32,
    ...input,
  });

function randomParams(config: ReturnType<typeof small>, seed: number): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  for (const [name, shape] of parameterShapes(config)) {
    params.set(name, {
      shape,
      data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
    });
  }
  return params;
}

function assertSameParams(actual: HostParams, expected: HostParams): void {
  assert.deepEqual([...actual.keys()], [...expected.keys()]);
  for (const [name, tensor] of expected) {
    assert.deepEqual(actual.get(name)!.shape, tensor.shape, name);
    assert.deepEqual(
      new Uint32Array(actual.get(name)!.data.slice().buffer),
      new Uint32Array(tensor.data.slice().buffer),
      name,
    );
  }
}

async function withTempDir(body: (root: string) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'agentrl-checkpoint-'));
  try {
    await body(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

test('save → load is bit-exact and writes the HF files', () =>
  withTempDir(async (root) => {
    for (const [i, config] of [
      small(),
      small({ attentionBias: true, tieWordEmbeddings: false, valueHead: true }),
    ].entries()) {
      const dir = join(root, `ckpt-${i}`);
      const params = randomParams(config, i);
      await saveCheckpoint(dir, { config, params, extra: { step: 7, note: 'é' } });
      assert.deepEqual((await readdir(dir)).sort(), [
        'config.json',
        'generation_config.json',
        'model.safetensors',
        'tokenizer.json',
        'tokenizer_config.json',
      ]);
      const loaded = await loadCheckpoint(dir);
      assert.deepEqual(loaded.config, config);
      assertSameParams(loaded.params, params);
      assert.equal(loaded.tokenizer, byteTokenizer);
      assert.deepEqual(loaded.extra, { step: 7, note: 'é' });
    }
    assert.deepEqual((await readdir(root)).sort(), ['ckpt-0', 'ckpt-1']); // no temp folders left
  }));

test('config.json, tokenizer_config.json and generation_config.json contents', () =>
  withTempDir(async (root) => {
    const config = small({ attentionBias: true });
    await saveCheckpoint(root + '/c', { config, params: randomParams(config, 1) });
    const hf = JSON.parse(await readFile(join(root, 'c', 'config.json'), 'utf8'));
    assert.deepEqual(hf.architectures, ['Qwen2ForCausalLM']);
    assert.equal(hf.vocab_size, 272);
    assert.equal(hf.eos_token_id, 258);
    assert.deepEqual(hf.agentrl.modelConfig, config);
    const tokenizerConfig = JSON.parse(await readFile(join(root, 'c', 'tokenizer_config.json'), 'utf8'));
    assert.equal(tokenizerConfig.chat_template, chatTemplateJinja);
    assert.equal(tokenizerConfig.eos_token, '<|end|>');
    assert.equal(tokenizerConfig.added_tokens_decoder['261'].content, '<|assistant|>');
    const generation = JSON.parse(await readFile(join(root, 'c', 'generation_config.json'), 'utf8'));
    assert.deepEqual(generation, { bos_token_id: 257, eos_token_id: 258, pad_token_id: 256 });
  }));

test('saving over a checkpoint replaces it; a folder that is not a checkpoint is refused', () =>
  withTempDir(async (root) => {
    const config = small();
    const dir = join(root, 'ckpt');
    await saveCheckpoint(dir, { config, params: randomParams(config, 1), extra: { step: 1 } });
    const second = randomParams(config, 2);
    await saveCheckpoint(dir, { config, params: second, extra: { step: 2 } });
    const loaded = await loadCheckpoint(dir);
    assertSameParams(loaded.params, second);
    assert.deepEqual(loaded.extra, { step: 2 });
    assert.deepEqual(await readdir(root), ['ckpt']);

    const notCheckpoint = join(root, 'photos');
    await mkdir(notCheckpoint);
    await writeFile(join(notCheckpoint, 'cat.jpg'), 'x');
    await assert.rejects(saveCheckpoint(notCheckpoint, { config, params: second }), /not a checkpoint/);
    assert.deepEqual(await readdir(notCheckpoint), ['cat.jpg']);
  }));

test('a failed save leaves the old checkpoint intact', () =>
  withTempDir(async (root) => {
    const config = small();
    const dir = join(root, 'ckpt');
    const params = randomParams(config, 1);
    await saveCheckpoint(dir, { config, params });
    const broken = randomParams(config, 2);
    broken.delete('finalNorm');
    await assert.rejects(saveCheckpoint(dir, { config, params: broken }));
    assertSameParams((await loadCheckpoint(dir)).params, params);
    assert.deepEqual(await readdir(root), ['ckpt']);
  }));

test("subfolder files (a LoRA checkpoint's adapter/) are part of the atomic save; names outside folder/file are refused", () =>
  withTempDir(async (root) => {
    const config = small();
    const dir = join(root, 'ckpt');
    await saveCheckpoint(dir, {
      config,
      params: randomParams(config, 1),
      subfolderFiles: [['adapter/a.json', '{"v":1}']],
    });
    assert.equal(await readFile(join(dir, 'adapter', 'a.json'), 'utf8'), '{"v":1}');
    // Replacing the checkpoint replaces its adapter/ in the same rename: no moment holds new weights with the old adapter.
    await saveCheckpoint(dir, {
      config,
      params: randomParams(config, 2),
      subfolderFiles: [['adapter/a.json', '{"v":2}']],
    });
    assert.equal(await readFile(join(dir, 'adapter', 'a.json'), 'utf8'), '{"v":2}');
    for (const name of [
      'a.json',
      '../evil/a.json',
      'adapter/../a.json',
      '/tmp/a.json',
      'adapter/x/a.json',
      'adapter/',
    ]) {
      await assert.rejects(
        saveCheckpoint(dir, { config, params: randomParams(config, 3), subfolderFiles: [[name, 'x']] }),
        /is not folder\/file/,
        name,
      );
    }
    assert.equal(await readFile(join(dir, 'adapter', 'a.json'), 'utf8'), '{"v":2}');
    assert.deepEqual(await readdir(root), ['ckpt']);
  }));

test('loads a plain HF folder (no agentrl block), sharded, with a TRL value head', () =>
  withTempDir(async (root) => {
    const config = small({ valueHead: true });
    const params = randomParams(config, 3);
    const hfTensors = toHfTensors(config, params);
    const names = [...hfTensors.keys()];
    const shards = [names.slice(0, 5), names.slice(5)];
    const weightMap: Record<string, string> = {};
    for (const [i, shard] of shards.entries()) {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      await writeFileAtomic(
        join(root, file),
        serializeSafetensors(new Map(shard.map((name) => [name, hfTensors.get(name)!]))),
      );
      for (const name of shard) weightMap[name] = file;
    }
    await writeFile(
      join(root, 'model.safetensors.index.json'),
      JSON.stringify({ metadata: {}, weight_map: weightMap }),
    );
    await writeFile(join(root, 'config.json'), JSON.stringify(toHfConfig(config)));
    const loaded = await loadCheckpoint(root);
    assert.equal(loaded.config.valueHead, true);
    assert.deepEqual(loaded.config, config);
    assertSameParams(loaded.params, params);
    assert.equal(loaded.tokenizer, undefined);
  }));

test('a custom BPE tokenizer is saved and loaded back', () =>
  withTempDir(async (root) => {
    const json = byteTokenizer.toTokenizerJson() as { model: { vocab: Record<string, number>; merges: string[] } };
    json.model.vocab['he'] = 263;
    json.model.merges = ['h e'];
    const tokenizer = loadHfTokenizer(json);
    const config = small();
    await saveCheckpoint(root + '/c', { config, params: randomParams(config, 4), tokenizer });
    const loaded = await loadCheckpoint(root + '/c');
    assert.notEqual(loaded.tokenizer, byteTokenizer);
    assert.deepEqual(loaded.tokenizer!.encode('hehe'), [263, 263]);
  }));

test('broken checkpoints are CheckpointErrors naming the file', () =>
  withTempDir(async (root) => {
    await assert.rejects(
      loadCheckpoint(join(root, 'missing')),
      (error: unknown) => error instanceof CheckpointError && /config\.json: cannot read/.test(error.message),
    );
    const config = small();
    const dir = join(root, 'c');
    await saveCheckpoint(dir, { config, params: randomParams(config, 5) });
    const bytes = await readFile(join(dir, 'model.safetensors'));
    await writeFile(join(dir, 'model.safetensors'), bytes.subarray(0, bytes.length - 4));
    await assert.rejects(loadCheckpoint(dir), (error: unknown) => {
      assert.ok(error instanceof CheckpointError);
      assert.match(error.message, /model\.safetensors: tensor "[^"]+": data_offsets .* out of range/);
      return true;
    });
    await writeFile(join(dir, 'config.json'), '{');
    await assert.rejects(loadCheckpoint(dir), /config\.json: invalid JSON/);
  }));
