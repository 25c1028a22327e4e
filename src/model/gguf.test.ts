import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Rng } from '../core/rng.ts';
import { CheckpointError } from '../core/errors.ts';
import { loadChatFormat } from '../chat/model-folder.ts';
import { headDim, modelConfigSchema, parameterShapes, type HostParams, type ModelConfig } from './config.ts';
import { parseGguf, readGgufTensor } from './gguf.ts';
import { loadGgufModel } from './gguf-model.ts';
import { writeGgufTokenizerFiles } from './gguf-tokenizer.ts';
import { toHfTensors } from './hf-config.ts';
import { writeGguf, type GgufWriterTensor } from './gguf-writer.ts';

const config = modelConfigSchema.parse({
  vocabSize: 8,
  hiddenSize: 8,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 12,
  maxSeqLen: 64,
  ropeTheta: 10000,
  rmsNormEps: 1e-5,
});
const tokens = ['a', 'b', 'ab', 'Ġ', 'Ġab', '<|im_start|>', '<|im_end|>', 'c'];
const chatTemplate =
  "{% for m in messages %}{{ '<|im_start|>' + m['content'] + '<|im_end|>' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>' }}{% endif %}";

function randomParams(seed: number, modelConfig: ModelConfig = config): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  for (const [name, shape] of parameterShapes(modelConfig))
    params.set(name, {
      shape,
      data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal()),
    });
  return params;
}

/** llama.cpp convert_hf_to_gguf.py `LlamaModel.permute`: rows [heads, 2, hd/2] → [heads, hd/2, 2]. */
function permute(data: Float32Array, heads: number, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  const headSize = rows / heads;
  for (let h = 0; h < heads; h++) {
    for (let half = 0; half < 2; half++) {
      for (let i = 0; i < headSize / 2; i++) {
        const from = (h * headSize + half * (headSize / 2) + i) * cols;
        out.set(data.subarray(from, from + cols), (h * headSize + 2 * i + half) * cols);
      }
    }
  }
  return out;
}

/** The HF weights as llama.cpp writes a llama GGUF: renamed, q/k permuted, embeddings Q8_0-free F32, one F16 tensor. */
function llamaGguf(
  params: HostParams,
  {
    modelConfig = config,
    architecture = 'llama',
  }: { modelConfig?: ModelConfig; architecture?: 'llama' | 'qwen3' } = {},
): Uint8Array {
  const hf = toHfTensors(modelConfig, params);
  const rename: [RegExp, string][] = [
    [/^model\.embed_tokens\.weight$/, 'token_embd.weight'],
    [/^model\.norm\.weight$/, 'output_norm.weight'],
    [/^model\.layers\.(\d+)\.input_layernorm\.weight$/, 'blk.$1.attn_norm.weight'],
    [/^model\.layers\.(\d+)\.post_attention_layernorm\.weight$/, 'blk.$1.ffn_norm.weight'],
    [/^model\.layers\.(\d+)\.self_attn\.(q|k|v)_proj\.weight$/, 'blk.$1.attn_$2.weight'],
    [/^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$/, 'blk.$1.attn_output.weight'],
    [/^model\.layers\.(\d+)\.self_attn\.(q|k)_norm\.weight$/, 'blk.$1.attn_$2_norm.weight'],
    [/^model\.layers\.(\d+)\.mlp\.(gate|up|down)_proj\.weight$/, 'blk.$1.ffn_$2.weight'],
  ];
  const tensors: GgufWriterTensor[] = [];
  for (const [name, tensor] of hf) {
    const ggufName = rename.reduce((current, [pattern, replacement]) => current.replace(pattern, replacement), name);
    let data = tensor.data;
    const [rows, cols] = tensor.shape as [number, number];
    if (architecture === 'llama' && ggufName.endsWith('attn_q.weight'))
      data = permute(data, modelConfig.numHeads, rows, cols);
    if (architecture === 'llama' && ggufName.endsWith('attn_k.weight'))
      data = permute(data, modelConfig.numKvHeads, rows, cols);
    tensors.push({ name: ggufName, shape: tensor.shape, type: 'F32', bytes: new Uint8Array(data.slice().buffer) });
  }
  const u32 = (value: number) => ({ type: 'u32', value }) as const;
  return writeGguf({
    alignment: 64,
    metadata: {
      'general.architecture': { type: 'string', value: architecture },
      [`${architecture}.block_count`]: u32(2),
      [`${architecture}.context_length`]: u32(64),
      [`${architecture}.embedding_length`]: u32(8),
      [`${architecture}.feed_forward_length`]: u32(12),
      [`${architecture}.attention.head_count`]: u32(2),
      [`${architecture}.attention.head_count_kv`]: u32(1),
      [`${architecture}.rope.freq_base`]: { type: 'f32', value: 10000 },
      [`${architecture}.attention.layer_norm_rms_epsilon`]: { type: 'f32', value: 1e-5 },
      [`${architecture}.rope.dimension_count`]: u32(headDim(modelConfig)),
      ...(architecture === 'qwen3'
        ? {
            'qwen3.attention.key_length': u32(headDim(modelConfig)),
            'qwen3.attention.value_length': u32(headDim(modelConfig)),
          }
        : {}),
      'tokenizer.ggml.model': { type: 'string', value: 'gpt2' },
      'tokenizer.ggml.pre': { type: 'string', value: 'smollm' },
      'tokenizer.ggml.tokens': { type: 'list', itemType: 'string', value: tokens },
      'tokenizer.ggml.token_type': { type: 'list', itemType: 'i32', value: [1, 1, 1, 1, 1, 3, 3, 1] },
      'tokenizer.ggml.merges': { type: 'list', itemType: 'string', value: ['a b', 'Ġ ab'] },
      'tokenizer.ggml.bos_token_id': u32(5),
      'tokenizer.ggml.eos_token_id': u32(6),
      'tokenizer.ggml.padding_token_id': u32(6),
      'tokenizer.chat_template': { type: 'string', value: chatTemplate },
      'general.flag': { type: 'bool', value: true },
    },
    tensors,
  });
}

test('a GGUF written by the test reads back: header, metadata of each type, tensor infos at the alignment', () => {
  const bytes = llamaGguf(randomParams(1));
  const gguf = parseGguf(bytes);
  assert.equal(gguf.version, 3);
  assert.equal(gguf.alignment, 64);
  assert.equal(gguf.metadata.get('general.architecture'), 'llama');
  assert.equal(gguf.metadata.get('llama.block_count'), 2);
  assert.equal(gguf.metadata.get('general.flag'), true);
  assert.equal(gguf.metadata.get('llama.attention.layer_norm_rms_epsilon'), Math.fround(1e-5));
  assert.deepEqual(gguf.metadata.get('tokenizer.ggml.tokens'), tokens);
  const embedding = gguf.tensors.find((tensor) => tensor.name === 'token_embd.weight')!;
  assert.deepEqual(embedding.shape, [8, 8]);
  for (const tensor of gguf.tensors) assert.equal(tensor.offset % 64, 0, tensor.name);
  assert.equal(readGgufTensor(gguf, embedding).data.length, 64);
});

test('a llama GGUF loads as the same config and weights: names mapped, q/k rotary permutation undone, tokenizer from metadata', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-gguf-'));
  try {
    const params = randomParams(2);
    const file = join(folder, 'tiny.gguf');
    await writeFile(file, llamaGguf(params));
    const loaded = await loadGgufModel(file);
    assert.deepEqual(loaded.config, config);
    assert.deepEqual([...loaded.params.keys()].sort(), [...params.keys()].sort());
    for (const [name, tensor] of params) {
      assert.deepEqual(loaded.params.get(name)!.shape, tensor.shape, name);
      assert.deepEqual(loaded.params.get(name)!.data, tensor.data, name);
    }
    assert.deepEqual(loaded.tokenizer.encode('ab ab<|im_end|>'), [2, 4, 6]);
    assert.equal(loaded.tokenizer.decode([2, 4]), 'ab ab');

    await writeGgufTokenizerFiles(loaded.gguf, join(folder, 'chat'));
    const chat = loadChatFormat(join(folder, 'chat'));
    assert.ok(chat.stopTokens.includes(6));
    const rendered = chat.render([{ role: 'user', content: 'ab ab' }], { addGenerationPrompt: true });
    assert.deepEqual(chat.tokenizer.decode(rendered.tokens), '<|im_start|>ab ab<|im_end|><|im_start|>');
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

test('a truncated or foreign file is a CheckpointError with the byte position', () => {
  const bytes = llamaGguf(randomParams(3));
  assert.throws(
    () => parseGguf(bytes.subarray(0, 100), { file: 'cut.gguf' }),
    (error: unknown) => error instanceof CheckpointError && /cut\.gguf: truncated/.test(error.message),
  );
  assert.throws(
    () => parseGguf(new TextEncoder().encode('PK\u0003\u0004 not gguf at all')),
    (error: unknown) => error instanceof CheckpointError && /not a GGUF file/.test(error.message),
  );
});

test('a qwen3 GGUF loads with its head size (attention.key_length), q/k norms and unpermuted q/k', async () => {
  const folder = await mkdtemp(join(tmpdir(), 'agentrl-gguf-'));
  try {
    const qwen3 = modelConfigSchema.parse({ ...config, headDimension: 6, qkNorm: true });
    const params = randomParams(4, qwen3);
    const file = join(folder, 'qwen3.gguf');
    await writeFile(file, llamaGguf(params, { modelConfig: qwen3, architecture: 'qwen3' }));
    const loaded = await loadGgufModel(file);
    assert.deepEqual(loaded.config, qwen3);
    for (const [name, tensor] of params) assert.deepEqual(loaded.params.get(name)!.data, tensor.data, name);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});
