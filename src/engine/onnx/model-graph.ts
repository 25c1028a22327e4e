/**
 * The built-in transformer's forward pass (Llama / Qwen2 / Qwen3, model/config.ts) as one ONNX
 * graph that serves scoring, prefill, decoding and (train-graph.ts) training alike; checked
 * against PyTorch/transformers in reference-parity.test.ts:
 *
 *   x = embed[tokens]                                                   [B, T, D]
 *   per block: x += Attn(RMSNorm(x)); x += SwiGLU(RMSNorm(x))
 *   RMSNorm(x) = x / sqrt(mean(x²) + ε) · w;  RoPE half-split with host cos/sin tables (rope-graph.ts)
 *   linear: x W (+ (α/r) · ((x ⊙ mask) A) B under LoRA, A/B (and the dropout masks) fed as inputs)
 *   h = RMSNorm(x)[head_rows]                                           [M, D]
 *   logits = (h · inv_temperature) Eᵀ (tied) or … W_head                [M, V]
 *   log_probs = LogSoftmax(logits) = l − m − log Σ exp(l − m), m = max l  [M, V]
 *   target_logprobs = log_probs[target]                                 [M]
 *
 * Numerics: the log-softmax is ORT's LogSoftmax, max-shifted and summed by MLAS's vectorised
 * kernel. ReduceLogSumExp (used before) sums exp in one float32 accumulator: on 64 rows of
 * 49,152 logits (~N(3, 2.5²)) its logsumexp was off by −3.97e-5 on average (max 1.24e-4) against a
 * float64 host sum; LogSoftmax by −9.8e-7 (max 9.7e-6) — see model-graph-numerics.test.ts.
 *
 * Inputs (B rows, T query tokens, S cached slots):
 *   tokens int32 [B, T]; cos, sin [B, T, hd/2] (per-row positions, rope.ts);
 *   attention_bias [B, 1, T, S + T] (0 = attend, −1e9 = masked; the S cache slots, then the T new);
 *   past_key.{i}, past_value.{i} [B, KV, S, hd] per layer (a masked dummy slot when there is no cache
 *   yet; `cache: false`, the training graphs: no cache inputs or outputs, the bias [B, 1, T, T]);
 *   head_rows int32 [M] (rows of the flattened [B·T] hidden states the head reads); targets int32 [M];
 *   inv_temperature [1] or [M] (per head row); the adapters `layers.{i}.{w}.loraA` [in, r] / `.loraB` [r, out] under LoRA;
 *   with `weights: 'inputs'`, every weight under its config.ts name (full fine-tuning feeds and
 *   differentiates them; no new session per step); with `dropout`, per adapted linear
 *   `layers.{i}.{w}.loraMask` [B, T, in]: 0 where dropped, else 1/(1−p) (inverted dropout, drawn on
 *   the host from a seeded Rng: lora-dropout.ts), multiplying the adapter's input only (PEFT);
 *   with `adapterGroups` R > 1 (generation across LoRA forks), `adapter_rows` int64 [R] and each
 *   set's adapters as `{name}.group{k}` instead of the adapter inputs.
 * Outputs: logits [M, V], target_logprobs [M], values [M] (value head), with `probabilities`
 * probabilities [M, V] (exp of the log-softmax: what the sampler draws from), key.{i} / value.{i}
 * [B, KV, T, hd] (the new tokens' keys and values, which the caller writes into its cache).
 *
 * The cache is attended without being copied: the scores against the cache and against the new
 * tokens are joined (small), the softmax runs over both, and the context sums the two parts.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { headDim, parameterShapes, type HostParams, type ModelConfig } from '../../model/config.ts';
import { loraScale, loraShapes, type LoraConfig } from '../../model/lora.ts';
import { attr, Graph, type ValueId } from './graph.ts';
import { GraphBuilder } from './ops.ts';
import { ropeTables, rotate, type RopeTables } from './rope-graph.ts';
import { graphWeights, joinedName } from './graph-weights.ts';
import { matMulNBits, type BaseQuantization, type NBitsWeight } from './matmul-nbits.ts';

export interface ModelGraphOptions {
  config: ModelConfig;
  /** Base weights (config.ts names); as initializers they are referenced until serialised. Unused with `weights: 'inputs'`. */
  params?: HostParams;
  /** LoRA settings: the adapters become graph inputs. */
  lora?: LoraConfig | null;
  /** 'initializers' (default: ORT pre-packs them) or 'inputs' (fed per run: trained in full, or shared). */
  weights?: 'initializers' | 'inputs';
  /** Under LoRA: the adapter inputs are multiplied by `{weight}.loraMask` inputs (training with dropout). */
  dropout?: boolean;
  /** The value head reads the trunk through a stop-gradient (TokenLoss.detachValueHead): it trains the head only. */
  detachValue?: boolean;
  /** 'int8' / 'int4': the projections and the head as MatMulNBits blocks (matmul-nbits.ts; inference, initializers only). Default 'float32'. */
  baseQuantization?: BaseQuantization;
  /**
   * Under LoRA, R > 1 adapter sets in one batch (generation across forks of one base,
   * generate-across.ts): the rows come sorted by set, `adapter_rows` int64 [R] counts them (0 allowed)
   * and set k's adapters are the inputs `groupAdapterName(name, k)`. Each adapted linear splits x
   * along the batch, runs each part through its own A·B and joins them: no per-row copy of the
   * adapters. Default 1: the graph above, unchanged.
   */
  adapterGroups?: number;
  /** False (training, scoring): no `past_*` inputs or `key.{i}` / `value.{i}` outputs, bias [B, 1, T, T]. Default true. */
  cache?: boolean;
  /** Adds the output `probabilities` [M, V] = exp(log_probs): the sampler draws from it (generation). */
  probabilities?: boolean;
}

/** The rows of each adapter set in a batch (adapterGroups > 1): int64 [R], summing to B. */
export const adapterRowsInput = 'adapter_rows';
/** The input name of adapter set `group`'s tensor `name` (a lora.ts name) when adapterGroups > 1. */
export const groupAdapterName = (name: string, group: number): string => `${name}.group${group}`;

/** The dropout-mask input of an adapted weight (`layers.{i}.{w}`): [B, T, in]. */
export const loraMaskName = (weight: string): string => `${weight}.loraMask`;

interface Context {
  g: GraphBuilder;
  config: ModelConfig;
  /** The weights the graph holds by name (joined projections under graph-weights.ts's joinedName). */
  weights: Map<string, ValueId>;
  /** config.ts's parameter shapes (the columns of each joined projection). */
  shapes: Map<string, number[]>;
  /** Adapter inputs by weight name (with their dropout masks when training with dropout), and the scale constant. */
  adapters: Map<string, { a: ValueId; b: ValueId; mask: ValueId | null }>;
  /** With adapterGroups > 1: per adapted weight, each set's A and B, and the rows-per-set input. */
  groups: { adapters: Map<string, { a: ValueId; b: ValueId }[]>; rows: ValueId } | null;
  detachValue: boolean;
  probabilities: boolean;
  /** Under baseQuantization: the quantized projections by name, and the head as 'head'. */
  quantized: Map<string, NBitsWeight> | null;
  loraScale: ValueId | null;
  rope: RopeTables;
  bias: ValueId; // [B, 1, T, S + T]
}

export const modelGraphInputs = {
  tokens: 'tokens',
  cos: 'cos',
  sin: 'sin',
  bias: 'attention_bias',
  headRows: 'head_rows',
  targets: 'targets',
  invTemperature: 'inv_temperature',
} as const;
export const pastKeyName = (layer: number): string => `past_key.${layer}`;
export const pastValueName = (layer: number): string => `past_value.${layer}`;
export const keyOutputName = (layer: number): string => `key.${layer}`;
export const valueOutputName = (layer: number): string => `value.${layer}`;

/** x W (+ scale · ((x ⊙ mask) A) B). x [B, T, in] → [B, T, out]. */
function linear(c: Context, name: string, x: ValueId): ValueId {
  return withAdapter(c, name, x, product(c, name, x));
}

/**
 * linear for projections `group` of layer `layer` that read the same x: one matmul of the joined
 * weight split by columns where the graph holds it (graph-weights.ts), each with its own adapter.
 */
function linears(c: Context, layer: number, group: readonly string[], x: ValueId): ValueId[] {
  const names = group.map((w) => `layers.${layer}.${w}`);
  const joined = joinedName(layer, group);
  if (!c.weights.has(joined) && c.quantized?.has(joined) !== true) return names.map((name) => linear(c, name, x));
  const widths = names.map((name) => at(c.shapes.get(name) ?? [], 1, `${name} shape`));
  const parts = c.g.split(product(c, joined, x), widths, -1);
  return names.map((name, i) => withAdapter(c, name, x, at(parts, i, 'joined projections')));
}

/** x W for a weight the graph holds (float32, or 4 / 8-bit blocks). */
function product(c: Context, name: string, x: ValueId): ValueId {
  const nbits = c.quantized?.get(name);
  return nbits === undefined ? c.g.matMul(x, weightOf(c, name)) : matMulNBits(c.g, x, name, nbits);
}

/** base + the LoRA update of weight `name` on x (grouped across adapter sets, or with its dropout mask). */
function withAdapter(c: Context, name: string, x: ValueId, base: ValueId): ValueId {
  const grouped = c.groups?.adapters.get(name);
  if (grouped !== undefined && c.loraScale !== null)
    return c.g.add(base, c.g.mul(groupedUpdate(c, x, grouped), c.loraScale));
  const adapter = c.adapters.get(name);
  if (adapter === undefined || c.loraScale === null) return base;
  const input = adapter.mask === null ? x : c.g.mul(x, adapter.mask); // [B, T, in]
  const update = c.g.mul(c.g.matMul(c.g.matMul(input, adapter.a), adapter.b), c.loraScale);
  return c.g.add(base, update);
}

/** x [B, T, in] split along B by `adapter_rows`, part k · A_k · B_k, joined again: [B, T, out]. */
function groupedUpdate(c: Context, x: ValueId, sets: readonly { a: ValueId; b: ValueId }[]): ValueId {
  const { g } = c;
  const inputShape = g.shape(x);
  const parts = g.graph.node(
    'Split',
    [x, c.groups!.rows],
    { axis: attr.int(0) },
    sets.map((_, k) => ({ dtype: 'float32' as const, shape: [`B${k}`, ...inputShape.slice(1)] })),
  );
  return g.concat(
    sets.map((set, k) => g.matMul(g.matMul(at(parts, k, 'Split outputs'), set.a), set.b)),
    0,
  );
}

function weightOf(c: Context, name: string): ValueId {
  const id = c.weights.get(name);
  if (id === undefined) throw new InvalidArgumentError(`model graph: no weight ${name} in this config`, { name });
  return id;
}

/** x / sqrt(mean(x²) + ε) · w over the last axis (the Pow/ReduceMean/Add/Sqrt/Div/Mul pattern ORT fuses). */
function rmsNorm(c: Context, x: ValueId, weight: ValueId): ValueId {
  const { g } = c;
  const meanSquare = g.reduce('ReduceMean', g.pow(x, g.scalar(2)), [-1]);
  return g.mul(g.div(x, g.sqrt(g.add(meanSquare, g.scalar(c.config.rmsNormEps)))), weight);
}

/** [B, T, heads·hd] → [B, heads, T, hd]. */
function splitHeads(c: Context, x: ValueId, heads: number): ValueId {
  return c.g.transpose(c.g.reshape(x, [0, 0, heads, headDim(c.config)]), [0, 2, 1, 3]);
}

/** The cache slots of one layer: its past keys and values [B, KV, S, hd], and int64 [1] S and S + T (shared). */
type LayerCache = Record<'key' | 'value' | 'length' | 'fullLength', ValueId>;

/**
 * softmax(q kᵀ + bias) v for grouped queries q [B, KV, G·T, hd] (pre-scaled by 1/√hd) and the new
 * keys / values [B, KV, T, hd]; with a cache its S slots join the scores and the context.
 */
function attend(c: Context, qg: ValueId, kh: ValueId, vh: ValueId, past: LayerCache | null): ValueId {
  const { g, config } = c;
  const H = config.numHeads;
  const KV = config.numKvHeads;
  const newScores = g.matMul(qg, g.transpose(kh, [0, 1, 3, 2])); // [B, KV, G·T, T]
  const scores =
    past === null ? newScores : g.concat([g.matMul(qg, g.transpose(past.key, [0, 1, 3, 2])), newScores], -1); // [B, KV, G·T, S+T]
  const biased = g.add(g.reshape(scores, [0, H, -1, 0]), c.bias); // [B, H, T, S+T]
  const weights = g.reshape(g.softmax(biased, -1), [0, KV, -1, 0]); // [B, KV, G·T, S+T]
  if (past === null) return g.matMul(weights, vh);
  const toCache = g.sliceDynamic(weights, g.int64s([0]), past.length, [-1], 'S');
  const toNew = g.sliceDynamic(weights, past.length, past.fullLength, [-1], 'T');
  return g.add(g.matMul(toCache, past.value), g.matMul(toNew, vh)); // [B, KV, G·T, hd]
}

/** One attention block: returns the projected context [B, T, D] and the new keys/values [B, KV, T, hd]. */
function attention(c: Context, layer: number, h: ValueId, past: LayerCache | null) {
  const { g, config } = c;
  const p = `layers.${layer}.`;
  const hd = headDim(config);
  const H = config.numHeads;
  const KV = config.numKvHeads;
  let [q, k, v] = linears(c, layer, ['wq', 'wk', 'wv'], h) as [ValueId, ValueId, ValueId]; // [B, T, H·hd], [B, T, KV·hd] ×2
  if (config.attentionBias) {
    q = g.add(q, weightOf(c, `${p}bq`));
    k = g.add(k, weightOf(c, `${p}bk`));
    v = g.add(v, weightOf(c, `${p}bv`));
  }
  let qh = splitHeads(c, q, H); // [B, H, T, hd]
  let kh = splitHeads(c, k, KV); // [B, KV, T, hd]
  if (config.qkNorm) {
    qh = rmsNorm(c, qh, weightOf(c, `${p}qNorm`));
    kh = rmsNorm(c, kh, weightOf(c, `${p}kNorm`));
  }
  qh = rotate(g, qh, c.rope);
  kh = rotate(g, kh, c.rope);
  const vh = splitHeads(c, v, KV); // [B, KV, T, hd]
  // Query heads grouped by their KV head (HF repeat_kv order: head = kv·G + g), scaled by 1/√hd
  // here rather than on the (larger) scores: [B, KV, G·T, hd].
  const qg = g.mul(g.reshape(qh, [0, KV, -1, hd]), g.scalar(1 / Math.sqrt(hd)));
  const context = attend(c, qg, kh, vh, past); // [B, KV, G·T, hd]
  const merged = g.reshape(g.transpose(g.reshape(context, [0, H, -1, hd]), [0, 2, 1, 3]), [0, 0, H * hd]); // [B, T, H·hd]
  return { out: linear(c, `${p}wo`, merged), key: kh, value: vh };
}

function mlp(c: Context, layer: number, h: ValueId): ValueId {
  const [gate, up] = linears(c, layer, ['wGate', 'wUp'], h) as [ValueId, ValueId];
  const activated = c.g.mul(gate, c.g.sigmoid(gate)); // silu
  return linear(c, `layers.${layer}.wDown`, c.g.mul(activated, up));
}

/** The output heads on the final hidden states [B, T, D]. */
function heads(c: Context, x: ValueId): void {
  const { g, config } = c;
  const final = rmsNorm(c, x, weightOf(c, 'finalNorm'));
  const rows = g.gather(
    g.reshape(final, [-1, config.hiddenSize]),
    g.graph.input(modelGraphInputs.headRows, 'int32', ['M']),
    0,
  ); // [M, D]
  // Scaled before the head, so the [M, V] logits are the only tensor of that size.
  // One inverse temperature for every row ([1]) or one per head row ([M]: a batch of samplers).
  const invTemperature = g.reshape(g.graph.input(modelGraphInputs.invTemperature, 'float32', ['K']), [-1, 1]);
  const scaled = g.mul(rows, invTemperature); // [M, D]
  const head = c.quantized?.get('head');
  const raw = head
    ? matMulNBits(g, scaled, 'head', head)
    : config.tieWordEmbeddings
      ? g.gemm(scaled, weightOf(c, 'embed'), { transB: true })
      : g.matMul(scaled, weightOf(c, 'lmHead'));
  const logits = g.graph.output(raw, 'logits'); // [M, V]
  const targets = g.unsqueeze(g.graph.input(modelGraphInputs.targets, 'int32', ['M']), [1]); // [M, 1]
  const logProbs = g.logSoftmax(logits, 1); // [M, V] (max-shifted inside ORT; train-graph.ts's entropy reads it)
  g.graph.output(g.reshape(g.gatherElements(logProbs, targets, 1), [-1]), 'target_logprobs');
  if (c.probabilities) g.graph.output(g.exp(logProbs), 'probabilities');
  if (config.valueHead) {
    const features = c.detachValue ? g.stopGradient(rows) : rows; // [M, D]
    const values = g.add(g.reshape(g.matMul(features, weightOf(c, 'valueHead.w')), [-1]), weightOf(c, 'valueHead.b'));
    g.graph.output(values, 'values');
  }
}

/** Under LoRA with adapterGroups > 1: each set's adapter inputs and `adapter_rows`; else null. */
function adapterGroupInputs(g: GraphBuilder, { config, lora = null, adapterGroups = 1, dropout }: ModelGraphOptions) {
  if (adapterGroups === 1) return null;
  if (!Number.isInteger(adapterGroups) || adapterGroups < 1)
    throw new InvalidArgumentError(`model graph: adapterGroups must be a positive integer, got ${adapterGroups}`, {
      adapterGroups,
    });
  if (lora === null || dropout === true)
    throw new InvalidArgumentError('model graph: adapterGroups > 1 needs a LoRA config and no dropout (generation)');
  const adapters = new Map<string, { a: ValueId; b: ValueId }[]>();
  const shapes = loraShapes(config, lora);
  for (const [name, shape] of shapes) {
    if (!name.endsWith('.loraA')) continue;
    const adapted = name.slice(0, -'.loraA'.length);
    const bName = `${adapted}.loraB`;
    const bShape = shapes.get(bName) ?? [];
    adapters.set(
      adapted,
      Array.from({ length: adapterGroups }, (_, k) => ({
        a: g.graph.input(groupAdapterName(name, k), 'float32', shape),
        b: g.graph.input(groupAdapterName(bName, k), 'float32', bShape),
      })),
    );
  }
  return { adapters, rows: g.graph.input(adapterRowsInput, 'int64', [adapterGroups]) };
}

/** Per layer the `past_key.{i}` / `past_value.{i}` inputs, with S (from the first) and S + T (from the bias). */
function cacheInputs(g: GraphBuilder, config: ModelConfig, bias: ValueId): LayerCache[] {
  const shape = ['B', config.numKvHeads, 'S', headDim(config)];
  const keys = Array.from({ length: config.numLayers }, (_, i) => g.graph.input(pastKeyName(i), 'float32', shape));
  const length = g.slice(g.shapeOf(at(keys, 0, 'past keys')), [2], [3], [0]);
  const fullLength = g.slice(g.shapeOf(bias), [3], [4], [0]);
  return keys.map((key, i) => ({
    key,
    value: g.graph.input(pastValueName(i), 'float32', shape),
    length,
    fullLength,
  }));
}

/** The forward graph for a config and its weights (see the module comment for inputs and outputs). */
export function buildModelGraph(options: ModelGraphOptions): Graph {
  const { config, lora = null } = options;
  const quantizedBase = (options.baseQuantization ?? 'float32') !== 'float32';
  const g = new GraphBuilder(new Graph({ opset: 17, extraOpsets: quantizedBase ? { 'com.microsoft': 1 } : {} }));
  const hd = headDim(config);
  const { values: weights, quantized } = graphWeights(g, config, options);
  const adapters = new Map<string, { a: ValueId; b: ValueId; mask: ValueId | null }>();
  const groups = adapterGroupInputs(g, options);
  if (lora !== null && groups === null) {
    const shapes = loraShapes(config, lora);
    for (const [name, shape] of shapes) {
      if (!name.endsWith('.loraA')) continue;
      const adapted = name.slice(0, -'.loraA'.length);
      const bShape = shapes.get(`${adapted}.loraB`) ?? [];
      adapters.set(adapted, {
        a: g.graph.input(name, 'float32', shape),
        b: g.graph.input(`${adapted}.loraB`, 'float32', bShape),
        mask:
          options.dropout === true
            ? g.graph.input(loraMaskName(adapted), 'float32', ['B', 'T', at(shape, 0, 'loraA shape')])
            : null,
      });
    }
  }
  const tokens = g.graph.input(modelGraphInputs.tokens, 'int32', ['B', 'T']);
  const unsqueezeTable = (name: string) => g.unsqueeze(g.graph.input(name, 'float32', ['B', 'T', hd / 2]), [1]); // [B, 1, T, hd/2]
  const cos = unsqueezeTable(modelGraphInputs.cos);
  const sin = unsqueezeTable(modelGraphInputs.sin);
  const cached = options.cache ?? true;
  const bias = g.graph.input(modelGraphInputs.bias, 'float32', ['B', 1, 'T', cached ? 'S+T' : 'T']);
  const caches = cached ? cacheInputs(g, config, bias) : null;
  const c: Context = {
    g,
    config,
    weights,
    shapes: parameterShapes(config),
    adapters,
    groups,
    detachValue: options.detachValue === true,
    probabilities: options.probabilities === true,
    quantized,
    loraScale: lora === null ? null : g.scalar(loraScale(lora)),
    rope: ropeTables(g, cos, sin, hd),
    bias,
  };
  let x = g.gather(weightOf(c, 'embed'), tokens, 0); // [B, T, D]
  for (let i = 0; i < config.numLayers; i++) {
    const p = `layers.${i}.`;
    const block = attention(c, i, rmsNorm(c, x, weightOf(c, `${p}attnNorm`)), caches && at(caches, i, 'caches'));
    if (caches !== null) {
      g.graph.output(block.key, keyOutputName(i));
      g.graph.output(block.value, valueOutputName(i));
    }
    x = g.add(x, block.out);
    x = g.add(x, mlp(c, i, rmsNorm(c, x, weightOf(c, `${p}mlpNorm`))));
  }
  heads(c, x);
  return g.graph;
}
