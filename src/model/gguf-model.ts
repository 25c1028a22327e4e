/**
 * A GGUF model (llama.cpp's `general.architecture` llama, qwen2 or qwen3) → the built-in model's
 * `ModelConfig` and float32 `HostParams` (every tensor dequantized, see gguf-dequant.ts).
 *
 *   token_embd.weight [V, D]            → embed
 *   blk.{i}.attn_norm.weight            → layers.{i}.attnNorm
 *   blk.{i}.attn_q|attn_k|attn_v.weight → layers.{i}.wq|wk|wv   (transposed; Q/K un-permuted, llama)
 *   blk.{i}.attn_q|attn_k|attn_v.bias   → layers.{i}.bq|bk|bv   (qwen2)
 *   blk.{i}.attn_q_norm|attn_k_norm     → layers.{i}.qNorm|kNorm (qwen3; head size from attention.key_length)
 *   blk.{i}.attn_output.weight          → layers.{i}.wo
 *   blk.{i}.ffn_norm.weight             → layers.{i}.mlpNorm
 *   blk.{i}.ffn_gate|ffn_up|ffn_down    → layers.{i}.wGate|wUp|wDown
 *   output_norm.weight                  → finalNorm
 *   output.weight [V, D]                → lmHead (absent: tied embeddings)
 *
 * llama.cpp's converter (convert_hf_to_gguf.py, `LlamaModel.permute`) reorders the rows of each
 * Llama q/k head from HF's rotate-half layout [2, hd/2] to interleaved pairs [hd/2, 2];
 * `unpermuteRotary` undoes it so the weights are HF's again. Qwen2 / Qwen3 GGUFs are not permuted.
 */
import { CheckpointError, UnsupportedArchitectureError } from '../core/errors.ts';
import { headDim, modelConfigSchema, type HostParams, type HostTensor, type ModelConfig } from './config.ts';
import { loadTokenizerJson, type ModelTokenizer } from '../chat/tokenizer-json.ts';
import { ggufMetadata, readGguf, readGgufTensor, type GgufFile } from './gguf.ts';
import { ggufTokenizerFiles } from './gguf-tokenizer.ts';
import { transpose2d } from './hf-config.ts';

export const ggufArchitectures = ['llama', 'qwen2', 'qwen3'] as const;

/** The model config a GGUF's metadata describes. */
export function ggufModelConfig(gguf: GgufFile): ModelConfig {
  const architecture = String(ggufMetadata(gguf, 'general.architecture'));
  if (!(ggufArchitectures as readonly string[]).includes(architecture)) {
    throw new UnsupportedArchitectureError({
      file: gguf.file,
      field: 'general.architecture',
      architecture,
      supported: ggufArchitectures,
    });
  }
  const number = (key: string, fallback?: number): number =>
    Number(ggufMetadata(gguf, `${architecture}.${key}`, fallback));
  const names = new Set(gguf.tensors.map((tensor) => tensor.name));
  const embedding = gguf.tensors.find((tensor) => tensor.name === 'token_embd.weight');
  if (embedding === undefined)
    throw new CheckpointError(`${gguf.file}: no token_embd.weight tensor`, { file: gguf.file });
  const hiddenSize = number('embedding_length');
  const numHeads = number('attention.head_count');
  const keyLength = gguf.metadata.get(`${architecture}.attention.key_length`);
  const headSize = keyLength === undefined ? hiddenSize / numHeads : Number(keyLength);
  const ropeDimensions = gguf.metadata.get(`${architecture}.rope.dimension_count`);
  if (ropeDimensions !== undefined && Number(ropeDimensions) !== headSize) {
    throw new CheckpointError(
      `${gguf.file}: rope.dimension_count ${ropeDimensions} differs from the head size ${headSize} (partial rotary is not supported)`,
      { file: gguf.file },
    );
  }
  if (gguf.metadata.has(`${architecture}.rope.scaling.type`) || names.has('rope_freqs.weight')) {
    throw new CheckpointError(`${gguf.file}: rope scaling is not supported`, { file: gguf.file });
  }
  return modelConfigSchema.parse({
    vocabSize: embedding.shape[0],
    hiddenSize,
    numLayers: number('block_count'),
    numHeads,
    numKvHeads: number('attention.head_count_kv', numHeads),
    intermediateSize: number('feed_forward_length'),
    maxSeqLen: number('context_length', 2048),
    ropeTheta: number('rope.freq_base', 10000),
    rmsNormEps: shortestFloat32(number('attention.layer_norm_rms_epsilon', 1e-6)),
    tieWordEmbeddings: !names.has('output.weight'),
    attentionBias: names.has('blk.0.attn_q.bias'),
    ...(headSize !== hiddenSize / numHeads ? { headDimension: headSize } : {}),
    ...(names.has('blk.0.attn_q_norm.weight') ? { qkNorm: true } : {}),
  });
}

/** Every tensor of a GGUF model dequantized into the built-in model's parameters. */
export function ggufHostParams(gguf: GgufFile, config: ModelConfig): HostParams {
  const architecture = String(ggufMetadata(gguf, 'general.architecture'));
  const headSize = headDim(config);
  const infos = new Map(gguf.tensors.map((info) => [info.name, info]));
  const used = new Set<string>();
  const read = (name: string): HostTensor => {
    const info = infos.get(name);
    if (info === undefined)
      throw new CheckpointError(`${gguf.file}: tensor "${name}" is missing`, { file: gguf.file, tensor: name });
    used.add(name);
    return readGgufTensor(gguf, info);
  };
  /** A GGUF [out, in] weight as the internal [in, out]; `heads` un-permutes rotary rows. */
  const linear = (name: string, heads?: number): HostTensor => {
    const tensor = read(name);
    const [rows, cols] = tensor.shape as [number, number];
    const data = heads === undefined ? tensor.data : unpermuteRotary(tensor.data, heads, headSize, cols);
    return { shape: [cols, rows], data: transpose2d(data, rows, cols) };
  };
  const permuted = architecture === 'llama';
  const params: HostParams = new Map();
  params.set('embed', read('token_embd.weight'));
  for (let i = 0; i < config.numLayers; i++) {
    const block = `blk.${i}.`;
    const layer = `layers.${i}.`;
    params.set(layer + 'attnNorm', read(block + 'attn_norm.weight'));
    params.set(layer + 'wq', linear(block + 'attn_q.weight', permuted ? config.numHeads : undefined));
    params.set(layer + 'wk', linear(block + 'attn_k.weight', permuted ? config.numKvHeads : undefined));
    params.set(layer + 'wv', linear(block + 'attn_v.weight'));
    if (config.attentionBias) {
      for (const [internal, name] of [
        ['bq', 'attn_q.bias'],
        ['bk', 'attn_k.bias'],
        ['bv', 'attn_v.bias'],
      ] as const)
        params.set(layer + internal, read(block + name));
    }
    if (config.qkNorm) {
      params.set(layer + 'qNorm', read(block + 'attn_q_norm.weight'));
      params.set(layer + 'kNorm', read(block + 'attn_k_norm.weight'));
    }
    params.set(layer + 'wo', linear(block + 'attn_output.weight'));
    params.set(layer + 'mlpNorm', read(block + 'ffn_norm.weight'));
    params.set(layer + 'wGate', linear(block + 'ffn_gate.weight'));
    params.set(layer + 'wUp', linear(block + 'ffn_up.weight'));
    params.set(layer + 'wDown', linear(block + 'ffn_down.weight'));
  }
  params.set('finalNorm', read('output_norm.weight'));
  if (!config.tieWordEmbeddings) params.set('lmHead', linear('output.weight'));
  const unknown = gguf.tensors.map((info) => info.name).filter((name) => !used.has(name));
  if (unknown.length > 0)
    throw new CheckpointError(`${gguf.file}: unknown tensors: ${unknown.join(', ')}`, { file: gguf.file, unknown });
  return params;
}

/**
 * Inverse of llama.cpp's `permute`: rows [heads, hd/2, 2] (interleaved) → [heads, 2, hd/2]
 * (HF's rotate-half), for a row-major [heads·hd, cols] matrix.
 */
export function unpermuteRotary(data: Float32Array, heads: number, headSize: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  const halfSize = headSize / 2;
  for (let head = 0; head < heads; head++) {
    for (let half = 0; half < 2; half++) {
      for (let i = 0; i < halfSize; i++) {
        const from = (head * headSize + 2 * i + half) * cols;
        const to = (head * headSize + half * halfSize + i) * cols;
        out.set(data.subarray(from, from + cols), to);
      }
    }
  }
  return out;
}

/** The shortest decimal that is the same float32 (GGUF stores 1e-5 as 9.99999974e-6). */
function shortestFloat32(value: number): number {
  for (let digits = 1; digits <= 17; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === Math.fround(value)) return candidate;
  }
  return value;
}

/** A `.gguf` file as the built-in model's config and float32 params, plus its tokenizer. */
export async function loadGgufModel(
  path: string,
): Promise<{ config: ModelConfig; params: HostParams; tokenizer: ModelTokenizer; gguf: GgufFile }> {
  const gguf = await readGguf(path);
  const config = ggufModelConfig(gguf);
  const params = ggufHostParams(gguf, config);
  const files = ggufTokenizerFiles(gguf);
  const tokenizer = loadTokenizerJson(files.tokenizerJson, {
    tokenizerConfig: files.tokenizerConfig,
    file: `${path} (tokenizer.ggml.*)`,
  });
  return { config, params, tokenizer, gguf };
}
