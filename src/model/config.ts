/**
 * Model configuration for the built-in decoder-only transformer (Llama / Qwen2 family).
 * Field names follow agentrl style; `hf-config.ts` maps them to and from Hugging Face
 * `config.json` (LlamaForCausalLM / Qwen2ForCausalLM).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';

export const modelConfigSchema = z.object({
  /** Number of token ids. */
  vocabSize: z.number().int().positive().default(272),
  /** Width of the residual stream (d_model). */
  hiddenSize: z.number().int().positive().default(128),
  /** Number of transformer blocks. */
  numLayers: z.number().int().positive().default(4),
  /** Query heads. */
  numHeads: z.number().int().positive().default(4),
  /** Key/value heads (grouped-query attention); must divide numHeads. */
  numKvHeads: z.number().int().positive().default(4),
  /** Width of the SwiGLU MLP. */
  intermediateSize: z.number().int().positive().default(512),
  /** Longest sequence (context window) the model handles. */
  maxSeqLen: z.number().int().positive().default(256),
  /** Base of the rotary position embedding frequencies. */
  ropeTheta: z.number().positive().default(10000),
  /** RMSNorm epsilon. */
  rmsNormEps: z.number().positive().default(1e-6),
  /** Share the token embedding with the output head. */
  tieWordEmbeddings: z.boolean().default(true),
  /** Qwen2-style biases on the q/k/v projections. */
  attentionBias: z.boolean().default(false),
  /** Size of each attention head; default hiddenSize / numHeads (Qwen3 sets it, e.g. 128 at hidden 1024 × 16 heads). */
  headDimension: z.number().int().positive().optional(),
  /** Qwen3-style RMSNorm of each query and key head (weights [headDim]) before the rotary embedding. */
  qkNorm: z.boolean().optional(),
  /** A scalar value head per token (PPO critic). */
  valueHead: z.boolean().default(false),
  /** Standard deviation of the initial weights. */
  initStd: z.number().positive().default(0.02),
});

export type ModelConfig = z.infer<typeof modelConfigSchema>;
export type ModelConfigInput = z.input<typeof modelConfigSchema>;

export function headDim(config: ModelConfig): number {
  return config.headDimension ?? config.hiddenSize / config.numHeads;
}

/** Heads must split the width evenly (RoPE rotates pairs) and KV heads must divide the query heads. */
export function checkAttentionShape(config: ModelConfig): void {
  if (config.hiddenSize % config.numHeads !== 0 || headDim(config) % 2 !== 0) {
    throw new InvalidArgumentError(
      `hiddenSize ${config.hiddenSize} must split into ${config.numHeads} heads of even size`,
    );
  }
  if (config.numHeads % config.numKvHeads !== 0) {
    throw new InvalidArgumentError(`numKvHeads ${config.numKvHeads} must divide numHeads ${config.numHeads}`);
  }
}

/**
 * Host-side parameters: flat names → row-major float32 data. Names (internal layout; linear
 * weights are stored [in, out] so the forward pass computes x @ W):
 *   embed [V, D]
 *   layers.{i}.attnNorm [D]
 *   layers.{i}.wq [D, H·hd]   layers.{i}.wk [D, KV·hd]   layers.{i}.wv [D, KV·hd]
 *   layers.{i}.bq [H·hd]      layers.{i}.bk [KV·hd]      layers.{i}.bv [KV·hd]   (attentionBias only)
 *   layers.{i}.qNorm [hd]     layers.{i}.kNorm [hd]                           (qkNorm only)
 *   layers.{i}.wo [H·hd, D]
 *   layers.{i}.mlpNorm [D]
 *   layers.{i}.wGate [D, F]   layers.{i}.wUp [D, F]      layers.{i}.wDown [F, D]
 *   finalNorm [D]
 *   lmHead [D, V]                                                          (untied only)
 *   valueHead.w [D, 1]        valueHead.b [1]                              (valueHead only)
 */
export interface HostTensor {
  shape: number[];
  data: Float32Array;
}
export type HostParams = Map<string, HostTensor>;

/** The expected parameter names and shapes for a config, in a stable order. */
export function parameterShapes(config: ModelConfig): Map<string, number[]> {
  const D = config.hiddenSize;
  const hd = headDim(config);
  const H = config.numHeads;
  const KV = config.numKvHeads;
  const F = config.intermediateSize;
  const V = config.vocabSize;
  const shapes = new Map<string, number[]>();
  shapes.set('embed', [V, D]);
  for (let i = 0; i < config.numLayers; i++) {
    const p = `layers.${i}.`;
    shapes.set(p + 'attnNorm', [D]);
    shapes.set(p + 'wq', [D, H * hd]);
    shapes.set(p + 'wk', [D, KV * hd]);
    shapes.set(p + 'wv', [D, KV * hd]);
    if (config.attentionBias) {
      shapes.set(p + 'bq', [H * hd]);
      shapes.set(p + 'bk', [KV * hd]);
      shapes.set(p + 'bv', [KV * hd]);
    }
    if (config.qkNorm) {
      shapes.set(p + 'qNorm', [hd]);
      shapes.set(p + 'kNorm', [hd]);
    }
    shapes.set(p + 'wo', [H * hd, D]);
    shapes.set(p + 'mlpNorm', [D]);
    shapes.set(p + 'wGate', [D, F]);
    shapes.set(p + 'wUp', [D, F]);
    shapes.set(p + 'wDown', [F, D]);
  }
  shapes.set('finalNorm', [D]);
  if (!config.tieWordEmbeddings) shapes.set('lmHead', [D, V]);
  if (config.valueHead) {
    shapes.set('valueHead.w', [D, 1]);
    shapes.set('valueHead.b', [1]);
  }
  return shapes;
}

/**
 * The same weights with a critic added: a value head of zeros (so it predicts 0 until trained) on
 * top of a model trained without one, e.g. PPO from an SFT checkpoint. Unchanged if it has one.
 */
export function withZeroValueHead(
  config: ModelConfig,
  params: HostParams,
): { config: ModelConfig; params: HostParams } {
  if (config.valueHead) return { config, params };
  const out = new Map(params);
  out.set('valueHead.w', { shape: [config.hiddenSize, 1], data: new Float32Array(config.hiddenSize) });
  out.set('valueHead.b', { shape: [1], data: new Float32Array(1) });
  return { config: { ...config, valueHead: true }, params: out };
}
