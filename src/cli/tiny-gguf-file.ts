/**
 * Test fixture of the model-source CLI tests: the tiny model of tiny-model-folder.ts (same config,
 * same weights) as a llama.cpp-style GGUF — tensors renamed and the q/k rows permuted as
 * convert_hf_to_gguf.py does, the tiny ChatML tokenizer as `tokenizer.ggml.*` metadata with its
 * chat template — and a pulled-model cache holding it, so `--model smollm2-135m-instruct` is
 * tested without the 98 MB download.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { bytesToUnicode } from '../chat/tokenizer.ts';
import { tinyChatmlTemplate } from '../chat/tiny-chatml.ts';
import { headDim } from '../model/config.ts';
import { writeGguf, type GgufWriterTensor } from '../model/gguf-writer.ts';
import { toHfTensors } from '../model/hf-config.ts';
import { pulledModelPaths } from '../model/model-sources.ts';
import { initHostParams } from '../model/params.ts';
import { tinyModelConfig } from './tiny-model-folder.ts';

const ggufNames: [RegExp, string][] = [
  [/^model\.embed_tokens\.weight$/, 'token_embd.weight'],
  [/^lm_head\.weight$/, 'output.weight'],
  [/^model\.norm\.weight$/, 'output_norm.weight'],
  [/^model\.layers\.(\d+)\.input_layernorm\.weight$/, 'blk.$1.attn_norm.weight'],
  [/^model\.layers\.(\d+)\.post_attention_layernorm\.weight$/, 'blk.$1.ffn_norm.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.(q|k|v)_proj\.weight$/, 'blk.$1.attn_$2.weight'],
  [/^model\.layers\.(\d+)\.self_attn\.o_proj\.weight$/, 'blk.$1.attn_output.weight'],
  [/^model\.layers\.(\d+)\.mlp\.(gate|up|down)_proj\.weight$/, 'blk.$1.ffn_$2.weight'],
];

/** llama.cpp's `LlamaModel.permute`: each head's rows [2, hd/2] → [hd/2, 2]. */
function permuteRows(data: Float32Array, heads: number, rows: number, columns: number): Float32Array {
  const out = new Float32Array(data.length);
  const headSize = rows / heads;
  for (let head = 0; head < heads; head++)
    for (let half = 0; half < 2; half++)
      for (let i = 0; i < headSize / 2; i++) {
        const from = (head * headSize + half * (headSize / 2) + i) * columns;
        out.set(data.subarray(from, from + columns), (head * headSize + 2 * i + half) * columns);
      }
  return out;
}

function tensorsOf(): GgufWriterTensor[] {
  const config = tinyModelConfig;
  return [...toHfTensors(config, initHostParams(config, 3))].map(([hfName, tensor]) => {
    const name = ggufNames.reduce((current, [pattern, replacement]) => current.replace(pattern, replacement), hfName);
    const [rows = 0, columns = 1] = tensor.shape;
    let data = tensor.data;
    if (name.endsWith('attn_q.weight')) data = permuteRows(data, config.numHeads, rows, columns);
    if (name.endsWith('attn_k.weight')) data = permuteRows(data, config.numKvHeads, rows, columns);
    return { name, shape: tensor.shape, type: 'F32', bytes: new Uint8Array(data.slice().buffer) };
  });
}

/** The GGUF bytes; `architecture` other than 'llama' makes a file of an unsupported family. */
export function tinyGguf({ architecture = 'llama' }: { architecture?: string } = {}): Uint8Array {
  const config = tinyModelConfig;
  const u32 = (value: number) => ({ type: 'u32', value }) as const;
  const f32 = (value: number) => ({ type: 'f32', value }) as const;
  const special = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'];
  const tokens = [...special, ...bytesToUnicode()];
  return writeGguf({
    metadata: {
      'general.architecture': { type: 'string', value: architecture },
      [`${architecture}.block_count`]: u32(config.numLayers),
      [`${architecture}.context_length`]: u32(config.maxSeqLen),
      [`${architecture}.embedding_length`]: u32(config.hiddenSize),
      [`${architecture}.feed_forward_length`]: u32(config.intermediateSize),
      [`${architecture}.attention.head_count`]: u32(config.numHeads),
      [`${architecture}.attention.head_count_kv`]: u32(config.numKvHeads),
      [`${architecture}.rope.freq_base`]: f32(config.ropeTheta),
      [`${architecture}.attention.layer_norm_rms_epsilon`]: f32(config.rmsNormEps),
      [`${architecture}.rope.dimension_count`]: u32(headDim(config)),
      'tokenizer.ggml.model': { type: 'string', value: 'gpt2' },
      'tokenizer.ggml.pre': { type: 'string', value: 'llama-bpe' },
      'tokenizer.ggml.tokens': { type: 'list', itemType: 'string', value: tokens },
      'tokenizer.ggml.token_type': { type: 'list', itemType: 'i32', value: tokens.map((_, id) => (id < 3 ? 3 : 1)) },
      'tokenizer.ggml.merges': { type: 'list', itemType: 'string', value: [] },
      'tokenizer.ggml.bos_token_id': u32(1),
      'tokenizer.ggml.eos_token_id': u32(2),
      'tokenizer.ggml.padding_token_id': u32(0),
      'tokenizer.chat_template': { type: 'string', value: tinyChatmlTemplate },
    },
    tensors: tensorsOf(),
  });
}

/** Writes the tiny GGUF at `file` and returns `file`. */
export async function tinyGgufFile(file: string, options: { architecture?: string } = {}): Promise<string> {
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, tinyGguf(options));
  return file;
}

/** A model cache (`$AGENTRL_CACHE`/models) in which smollm2-135m-instruct is "pulled" as the tiny GGUF; returns its folder. */
export async function tinyPulledModel(cacheRoot: string): Promise<string> {
  const { folder, gguf } = pulledModelPaths('smollm2-135m-instruct', join(cacheRoot, 'models'));
  await tinyGgufFile(gguf);
  return folder;
}
