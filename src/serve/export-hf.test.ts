import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadCheckpoint, saveCheckpoint } from '../model/checkpoint.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { parseSafetensors } from '../model/safetensors.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { exportHuggingFace } from './export-hf.ts';
import { tinyChatmlFiles, tinyChatmlFormat } from '../chat/tiny-chatml.ts';

test('export-hf: a HF folder without the value head, loadable back bit-exactly', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-export-'));
  try {
    const model = await TransformerModel.create(
      {
        hiddenSize: 32,
        numLayers: 2,
        numHeads: 2,
        numKvHeads: 1,
        intermediateSize: 64,
        maxSeqLen: 64,
        valueHead: true,
      },
      { seed: 3 },
    );
    const params = await model.hostParams();
    await saveCheckpoint(join(dir, 'trained'), { config: model.config, params, extra: { step: 12 } });
    const result = await exportHuggingFace(join(dir, 'trained'), join(dir, 'hf'));
    assert.deepEqual((await readdir(join(dir, 'hf'))).sort(), result.files);
    assert.equal(result.architecture, 'LlamaForCausalLM');

    const config = JSON.parse(await readFile(join(dir, 'hf', 'config.json'), 'utf8'));
    assert.deepEqual(
      [config.architectures, config.model_type, config.num_key_value_heads, config.eos_token_id],
      [['LlamaForCausalLM'], 'llama', 1, byteTokenizer.specialTokens.end],
    );
    const tensors = parseSafetensors(await readFile(join(dir, 'hf', 'model.safetensors'))).tensors;
    assert.ok(tensors.has('model.embed_tokens.weight') && tensors.has('model.layers.1.mlp.down_proj.weight'));
    assert.ok(![...tensors.keys()].some((name) => name.startsWith('v_head')), 'no value head');
    assert.equal(
      result.parameters,
      [...tensors.values()].reduce((sum, tensor) => sum + tensor.data.length, 0),
    );
    const generation = JSON.parse(await readFile(join(dir, 'hf', 'generation_config.json'), 'utf8'));
    assert.deepEqual([generation.eos_token_id, generation.max_length], [byteTokenizer.specialTokens.end, 64]);
    // ids 263-271 are embedding rows past the tokenizer's 263 tokens: transformers' generate must never sample them
    assert.deepEqual(generation.suppress_tokens, [263, 264, 265, 266, 267, 268, 269, 270, 271]);
    assert.match(await readFile(join(dir, 'hf', 'README.md'), 'utf8'), /convert_hf_to_gguf\.py/);

    const loaded = await loadCheckpoint(join(dir, 'hf'));
    assert.equal(loaded.tokenizer, byteTokenizer);
    assert.equal(loaded.config.valueHead, false);
    assert.equal(loaded.extra.step, 12);
    for (const [name, tensor] of params) {
      if (name.startsWith('valueHead.')) assert.equal(loaded.params.has(name), false);
      else assert.deepEqual(loaded.params.get(name)!.data, tensor.data, name);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("export-hf of a real model's checkpoint keeps ITS tokenizer.json, chat template and generation config (not the byte model's)", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-export-model-'));
  try {
    const config = {
      vocabSize: 264,
      hiddenSize: 8,
      numLayers: 1,
      numHeads: 2,
      numKvHeads: 2,
      intermediateSize: 16,
      maxSeqLen: 32,
    };
    const files = tinyChatmlFiles();
    const model = await TransformerModel.create(config, { seed: 1 });
    await saveCheckpoint(join(dir, 'ckpt'), {
      config: model.config,
      params: await model.hostParams(),
      tokenizer: tinyChatmlFormat().tokenizer,
      chatFiles: files,
    });
    await exportHuggingFace(join(dir, 'ckpt'), join(dir, 'hf'));
    const read = async (name: string) => JSON.parse(await readFile(join(dir, 'hf', name), 'utf8'));
    assert.deepEqual(await read('tokenizer.json'), files.tokenizerJson);
    assert.equal((await read('tokenizer_config.json')).chat_template, files.tokenizerConfig.chat_template);
    assert.deepEqual(await read('generation_config.json'), files.generationConfig);
    assert.equal((await read('special_tokens_map.json')).eos_token, '<|im_end|>');
    const exported = await loadCheckpoint(join(dir, 'hf'));
    assert.equal(exported.chatFormat?.stopTokens.includes(2), true);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
