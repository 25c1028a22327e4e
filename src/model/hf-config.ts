/**
 * Hugging Face interop: `ModelConfig` ↔ `config.json` (LlamaForCausalLM / Qwen2ForCausalLM) and
 * `HostParams` (internal names, linear weights [in, out]) ↔ HF tensor names (Linear weights
 * [out, in], so every linear weight is transposed exactly).
 *
 *   embed                ↔ model.embed_tokens.weight                      [V, D] both
 *   layers.{i}.attnNorm  ↔ model.layers.{i}.input_layernorm.weight
 *   layers.{i}.wq|wk|wv|wo ↔ model.layers.{i}.self_attn.{q,k,v,o}_proj.weight   (transposed)
 *   layers.{i}.bq|bk|bv  ↔ model.layers.{i}.self_attn.{q,k,v}_proj.bias
 *   layers.{i}.qNorm|kNorm ↔ model.layers.{i}.self_attn.{q,k}_norm.weight      (Qwen3, [head_dim])
 *   layers.{i}.mlpNorm   ↔ model.layers.{i}.post_attention_layernorm.weight
 *   layers.{i}.wGate|wUp|wDown ↔ model.layers.{i}.mlp.{gate,up,down}_proj.weight  (transposed)
 *   finalNorm            ↔ model.norm.weight
 *   lmHead [D, V]        ↔ lm_head.weight [V, D]                           (untied only)
 *   valueHead.w [D, 1]   ↔ v_head.summary.weight [1, D]                    (TRL value head)
 *   valueHead.b [1]      ↔ v_head.summary.bias [1]
 *
 * The mapping assumes the forward pass uses HF's rotary convention (rotate_half: dimension j
 * pairs with j + hd/2 inside each head) and head-major q/k/v columns ([head, hd]).
 */
import { CheckpointError, InvalidArgumentError, UnsupportedArchitectureError } from '../core/errors.ts';
import {
  headDim,
  modelConfigSchema,
  parameterShapes,
  type HostParams,
  type HostTensor,
  type ModelConfig,
} from './config.ts';
import { byteSpecialTokens } from '../chat/tokenizer.ts';
import { at } from '../core/indexing.ts';

export const hfArchitectures = ['LlamaForCausalLM', 'Qwen2ForCausalLM', 'Qwen3ForCausalLM'] as const;
export type HfArchitecture = (typeof hfArchitectures)[number];

const modelTypeOf: Record<HfArchitecture, string> = {
  LlamaForCausalLM: 'llama',
  Qwen2ForCausalLM: 'qwen2',
  Qwen3ForCausalLM: 'qwen3',
};

export interface HfTokenIds {
  bosTokenId: number;
  eosTokenId: number;
  padTokenId: number;
}

const byteTokenIds: HfTokenIds = {
  bosTokenId: byteSpecialTokens.bos,
  eosTokenId: byteSpecialTokens.end,
  padTokenId: byteSpecialTokens.pad,
};

/** The HF architecture a config exports as by default: Qwen3 with q/k norms, Qwen2 with q/k/v biases, else Llama. */
export function defaultArchitecture(config: ModelConfig): HfArchitecture {
  if (config.qkNorm) return 'Qwen3ForCausalLM';
  return config.attentionBias ? 'Qwen2ForCausalLM' : 'LlamaForCausalLM';
}

/** ModelConfig → HF `config.json` fields. */
export function toHfConfig(
  config: ModelConfig,
  {
    architecture = defaultArchitecture(config),
    tokenIds = byteTokenIds,
  }: { architecture?: HfArchitecture; tokenIds?: HfTokenIds } = {},
): Record<string, unknown> {
  if (!hfArchitectures.includes(architecture)) {
    throw new InvalidArgumentError(`unknown architecture "${architecture}"; allowed: ${hfArchitectures.join(', ')}`, {
      architecture,
    });
  }
  if (architecture === 'Qwen2ForCausalLM' && !config.attentionBias) {
    throw new InvalidArgumentError(
      'Qwen2ForCausalLM always has q/k/v biases; set attentionBias: true or export as LlamaForCausalLM',
      { architecture },
    );
  }
  if ((architecture === 'Qwen3ForCausalLM') !== (config.qkNorm === true)) {
    throw new InvalidArgumentError(
      `${architecture} ${config.qkNorm ? 'lacks' : 'needs'} q/k norms; export a config with qkNorm as Qwen3ForCausalLM, without as Llama/Qwen2`,
      { architecture },
    );
  }
  if (architecture !== 'Qwen2ForCausalLM' && config.attentionBias) {
    throw new InvalidArgumentError(
      `${architecture} attention_bias also adds an o_proj bias the built-in model lacks; export as Qwen2ForCausalLM`,
      { architecture },
    );
  }
  const common = {
    architectures: [architecture],
    model_type: modelTypeOf[architecture],
    vocab_size: config.vocabSize,
    hidden_size: config.hiddenSize,
    intermediate_size: config.intermediateSize,
    num_hidden_layers: config.numLayers,
    num_attention_heads: config.numHeads,
    num_key_value_heads: config.numKvHeads,
    max_position_embeddings: config.maxSeqLen,
    rope_theta: config.ropeTheta,
    rope_scaling: null,
    rms_norm_eps: config.rmsNormEps,
    tie_word_embeddings: config.tieWordEmbeddings,
    hidden_act: 'silu',
    initializer_range: config.initStd,
    attention_dropout: 0,
    use_cache: true,
    torch_dtype: 'float32',
    bos_token_id: tokenIds.bosTokenId,
    eos_token_id: tokenIds.eosTokenId,
    pad_token_id: tokenIds.padTokenId,
  };
  if (architecture === 'LlamaForCausalLM') {
    return { ...common, attention_bias: false, mlp_bias: false, head_dim: headDim(config), pretraining_tp: 1 };
  }
  if (architecture === 'Qwen3ForCausalLM') {
    return {
      ...common,
      head_dim: headDim(config),
      attention_bias: false,
      use_sliding_window: false,
      sliding_window: null,
      max_window_layers: config.numLayers,
    };
  }
  return { ...common, use_sliding_window: false, sliding_window: null, max_window_layers: config.numLayers };
}

/**
 * HF `config.json` → ModelConfig (valueHead false; the checkpoint loader sets it from the tensors).
 * Features the built-in model lacks (rope scaling, MLP or o_proj biases, sliding window, another
 * activation) are a CheckpointError listing them.
 */
export function fromHfConfig(json: unknown, { file = 'config.json' }: { file?: string } = {}): ModelConfig {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new CheckpointError(`${file}: not a JSON object`, { file });
  }
  const hf = json as Record<string, unknown>;
  const problems: string[] = [];
  const architecture = hfArchitectures.find(
    (name) =>
      (Array.isArray(hf.architectures) && hf.architectures.includes(name)) || hf.model_type === modelTypeOf[name],
  );
  if (architecture === undefined) {
    throw new UnsupportedArchitectureError({
      file,
      field: 'architecture',
      architecture: Array.isArray(hf.architectures)
        ? hf.architectures.join(', ')
        : String(hf.model_type ?? '(none given)'),
      supported: hfArchitectures,
    });
  }
  const integer = (key: string, fallback?: number): number => {
    const value = hf[key] ?? fallback;
    if (!Number.isInteger(value) || (value as number) <= 0)
      problems.push(`${key} must be a positive integer (got ${JSON.stringify(hf[key])})`);
    return value as number;
  };
  const positive = (key: string, fallback: number): number => {
    const value = hf[key] ?? fallback;
    if (typeof value !== 'number' || !(value > 0))
      problems.push(`${key} must be a positive number (got ${JSON.stringify(hf[key])})`);
    return value as number;
  };
  const numHeads = integer('num_attention_heads');
  const hiddenSize = integer('hidden_size');
  const config = {
    vocabSize: integer('vocab_size'),
    hiddenSize,
    numLayers: integer('num_hidden_layers'),
    numHeads,
    numKvHeads: integer('num_key_value_heads', numHeads),
    intermediateSize: integer('intermediate_size'),
    maxSeqLen: integer('max_position_embeddings', 2048),
    ropeTheta: positive('rope_theta', 10000),
    rmsNormEps: positive('rms_norm_eps', 1e-6),
    tieWordEmbeddings: hf.tie_word_embeddings === undefined ? false : hf.tie_word_embeddings === true,
    attentionBias: architecture === 'Qwen2ForCausalLM',
    valueHead: false,
    initStd: positive('initializer_range', 0.02),
  };
  if ((hf.hidden_act ?? 'silu') !== 'silu')
    problems.push(`hidden_act ${JSON.stringify(hf.hidden_act)} is not supported (only "silu")`);
  if (hf.rope_scaling !== undefined && hf.rope_scaling !== null) problems.push('rope_scaling is not supported');
  if (hf.mlp_bias === true) problems.push('mlp_bias is not supported');
  if (architecture !== 'Qwen2ForCausalLM' && hf.attention_bias === true)
    problems.push(`attention_bias (with o_proj bias) is not supported for ${architecture}`);
  if (hf.use_sliding_window === true) problems.push('use_sliding_window is not supported');
  const headDimension = hf.head_dim ?? undefined;
  if (headDimension !== undefined && headDimension !== hiddenSize / numHeads) {
    if (architecture !== 'Qwen3ForCausalLM')
      problems.push(
        `head_dim ${JSON.stringify(hf.head_dim)} differs from hidden_size / num_attention_heads = ${hiddenSize / numHeads}`,
      );
    else if (!Number.isInteger(headDimension) || (headDimension as number) <= 0 || (headDimension as number) % 2 !== 0)
      problems.push(`head_dim ${JSON.stringify(hf.head_dim)} must be a positive even integer`);
    else Object.assign(config, { headDimension });
  }
  if (architecture === 'Qwen3ForCausalLM') Object.assign(config, { qkNorm: true });
  if (
    problems.length === 0 &&
    (((config as ModelConfig).headDimension === undefined && hiddenSize % numHeads !== 0) ||
      numHeads % config.numKvHeads !== 0)
  ) {
    problems.push(
      'hidden_size must be divisible by num_attention_heads (or head_dim given), and num_attention_heads by num_key_value_heads',
    );
  }
  if (problems.length > 0) throw new CheckpointError(`${file}: ${problems.join('; ')}`, { file, problems });
  return modelConfigSchema.parse(config);
}

interface NameRule {
  internal: string;
  hf: string;
  transpose: boolean;
}

/** Internal name ↔ HF name pairs for a config, in parameterShapes order. */
export function hfTensorNames(config: ModelConfig): NameRule[] {
  const rules: NameRule[] = [];
  for (const internal of parameterShapes(config).keys()) rules.push(ruleFor(internal));
  return rules;
}

const layerRules: Record<string, [string, boolean]> = {
  attnNorm: ['input_layernorm.weight', false],
  wq: ['self_attn.q_proj.weight', true],
  wk: ['self_attn.k_proj.weight', true],
  wv: ['self_attn.v_proj.weight', true],
  wo: ['self_attn.o_proj.weight', true],
  bq: ['self_attn.q_proj.bias', false],
  bk: ['self_attn.k_proj.bias', false],
  bv: ['self_attn.v_proj.bias', false],
  qNorm: ['self_attn.q_norm.weight', false],
  kNorm: ['self_attn.k_norm.weight', false],
  mlpNorm: ['post_attention_layernorm.weight', false],
  wGate: ['mlp.gate_proj.weight', true],
  wUp: ['mlp.up_proj.weight', true],
  wDown: ['mlp.down_proj.weight', true],
};

const topRules: Record<string, [string, boolean]> = {
  embed: ['model.embed_tokens.weight', false],
  finalNorm: ['model.norm.weight', false],
  lmHead: ['lm_head.weight', true],
  'valueHead.w': ['v_head.summary.weight', true],
  'valueHead.b': ['v_head.summary.bias', false],
};

function ruleFor(internal: string): NameRule {
  const [, layer, weight] = /^layers\.(\d+)\.(\w+)$/.exec(internal) ?? [];
  const rule = layer !== undefined && weight !== undefined ? layerRules[weight] : topRules[internal];
  if (rule === undefined)
    throw new InvalidArgumentError(`no Hugging Face name for parameter "${internal}"`, { name: internal });
  return { internal, hf: layer !== undefined ? `model.layers.${layer}.${rule[0]}` : rule[0], transpose: rule[1] };
}

/** Row-major [rows, cols] → [cols, rows]. */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  if (data.length !== rows * cols)
    throw new InvalidArgumentError(`transpose2d: ${data.length} values are not ${rows} × ${cols}`, { rows, cols });
  const out = new Float32Array(data.length);
  for (let i = 0; i < rows; i++) {
    const row = i * cols;
    for (let j = 0; j < cols; j++) out[j * rows + i] = data[row + j] as number;
  }
  return out;
}

function convert(tensor: HostTensor, transpose: boolean): HostTensor {
  if (!transpose) return { shape: [...tensor.shape], data: tensor.data };
  const [rows, cols] = tensor.shape as [number, number];
  return { shape: [cols, rows], data: transpose2d(tensor.data, rows, cols) };
}

/** HostParams → HF-named tensors ([out, in] linear weights). Missing or misshapen params are errors. */
export function toHfTensors(config: ModelConfig, params: HostParams): Map<string, HostTensor> {
  const shapes = parameterShapes(config);
  const problems: string[] = [];
  for (const [name, shape] of shapes) {
    const tensor = params.get(name);
    if (tensor === undefined) problems.push(`missing "${name}"`);
    else if (!sameShape(tensor.shape, shape) || tensor.data.length !== product(shape)) {
      problems.push(`"${name}" has shape [${tensor.shape}] (${tensor.data.length} values), expected [${shape}]`);
    }
  }
  for (const name of params.keys()) if (!shapes.has(name)) problems.push(`unexpected "${name}"`);
  if (problems.length > 0)
    throw new InvalidArgumentError(`parameters do not match the config: ${problems.join('; ')}`, { problems });
  const out = new Map<string, HostTensor>();
  for (const rule of hfTensorNames(config)) out.set(rule.hf, convert(params.get(rule.internal)!, rule.transpose));
  return out;
}

/** HF tensor names that are buffers, not parameters, and are skipped on load. */
function isIgnorable(name: string, config: ModelConfig): boolean {
  return name.endsWith('.rotary_emb.inv_freq') || (config.tieWordEmbeddings && name === 'lm_head.weight');
}

/**
 * HF-named tensors → HostParams. Missing, misshapen and unknown tensors are one CheckpointError
 * listing all of them. (`lm_head.weight` is ignored for tied configs; rotary buffers are ignored.)
 */
export function fromHfTensors(
  config: ModelConfig,
  tensors: ReadonlyMap<string, HostTensor>,
  { file = 'model.safetensors' }: { file?: string } = {},
): HostParams {
  const shapes = parameterShapes(config);
  const params: HostParams = new Map();
  const missing: string[] = [];
  const misshapen: string[] = [];
  const used = new Set<string>();
  for (const rule of hfTensorNames(config)) {
    const shape = shapes.get(rule.internal)!;
    const expected = rule.transpose ? [at(shape, 1, 'shape'), at(shape, 0, 'shape')] : shape;
    const tensor = tensors.get(rule.hf);
    if (tensor === undefined) {
      missing.push(rule.hf);
      continue;
    }
    used.add(rule.hf);
    if (!sameShape(tensor.shape, expected) || tensor.data.length !== product(expected)) {
      misshapen.push(`${rule.hf} [${tensor.shape}] (expected [${expected}])`);
      continue;
    }
    params.set(rule.internal, convert(tensor, rule.transpose));
  }
  const unknown = [...tensors.keys()].filter((name) => !used.has(name) && !isIgnorable(name, config));
  if (missing.length + misshapen.length + unknown.length > 0) {
    const parts = [
      missing.length > 0 ? `missing tensors: ${missing.join(', ')}` : '',
      misshapen.length > 0 ? `wrong shapes: ${misshapen.join(', ')}` : '',
      unknown.length > 0 ? `unknown tensors: ${unknown.join(', ')}` : '',
    ].filter((part) => part !== '');
    throw new CheckpointError(`${file}: ${parts.join('; ')}`, { file, missing, misshapen, unknown });
  }
  return params;
}

function sameShape(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

function product(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}
