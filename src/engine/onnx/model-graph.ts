/**
 * The built-in transformer's forward pass (src/model/transformer.ts) as one ONNX graph that
 * serves scoring, prefill and decoding alike. Same numerics as the jax-js model:
 *
 *   x = embed[tokens]                                                   [B, T, D]
 *   per block: x += Attn(RMSNorm(x)); x += SwiGLU(RMSNorm(x))
 *   RMSNorm(x) = x / sqrt(mean(x²) + ε) · w;  RoPE half-split with host cos/sin tables
 *   linear: x W (+ (α/r) · (x A) B under LoRA, A/B fed as inputs)
 *   h = RMSNorm(x)[head_rows]                                           [M, D]
 *   logits = (h · inv_temperature) Eᵀ (tied) or … W_head                [M, V]
 *   target_logprobs = logits[target] − logsumexp(logits)               [M]
 *
 * Inputs (B rows, T query tokens, S cached slots):
 *   tokens int32 [B, T]; cos, sin [B, T, hd/2] (per-row positions, rope.ts);
 *   attention_bias [B, 1, T, S + T] (0 = attend, −1e9 = masked; the S cache slots, then the T new);
 *   past_key.{i}, past_value.{i} [B, KV, S, hd] per layer (a masked dummy slot when there is no cache);
 *   head_rows int32 [M] (rows of the flattened [B·T] hidden states the head reads); targets int32 [M];
 *   inv_temperature [1]; the adapters `layers.{i}.{w}.loraA` [in, r] / `.loraB` [r, out] under LoRA.
 * Outputs: logits [M, V], target_logprobs [M], values [M] (value head), key.{i} / value.{i}
 * [B, KV, T, hd] (the new tokens' keys and values, which the caller writes into its cache).
 *
 * The cache is attended without being copied: the scores against the cache and against the new
 * tokens are joined (small), the softmax runs over both, and the context sums the two parts.
 */
import { at } from '../../core/indexing.ts';
import { headDim, parameterShapes, type HostParams, type ModelConfig } from '../../model/config.ts';
import { loraScale, loraShapes, type LoraConfig } from '../../model/lora.ts';
import { Graph, type ValueId } from './graph.ts';
import { GraphBuilder } from './ops.ts';

export interface ModelGraphOptions {
  config: ModelConfig;
  /** Base weights (config.ts names); they become initializers, referenced until serialised. */
  params: HostParams;
  /** LoRA settings: the adapters become graph inputs. */
  lora?: LoraConfig | null;
}

interface Context {
  g: GraphBuilder;
  config: ModelConfig;
  weights: Map<string, ValueId>;
  /** Adapter inputs by weight name, with the scale constant. */
  adapters: Map<string, { a: ValueId; b: ValueId }>;
  loraScale: ValueId | null;
  cos: ValueId; // [B, 1, T, hd/2]
  sin: ValueId;
  bias: ValueId; // [B, 1, T, S + T]
  /** int64 [1] holding S, and holding S + T, for splitting the attention weights. */
  cacheLength: ValueId;
  fullLength: ValueId;
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

/** x W (+ scale · (x A) B). x [B, T, in] → [B, T, out]. */
function linear(c: Context, name: string, x: ValueId): ValueId {
  const base = c.g.matMul(x, c.weights.get(name)!);
  const adapter = c.adapters.get(name);
  if (adapter === undefined) return base;
  const update = c.g.mul(c.g.matMul(c.g.matMul(x, adapter.a), adapter.b), c.loraScale!);
  return c.g.add(base, update);
}

/** x / sqrt(mean(x²) + ε) · w over the last axis (the Pow/ReduceMean/Add/Sqrt/Div/Mul pattern ORT fuses). */
function rmsNorm(c: Context, x: ValueId, weight: ValueId): ValueId {
  const { g } = c;
  const meanSquare = g.reduce('ReduceMean', g.pow(x, g.scalar(2)), [-1]);
  return g.mul(g.div(x, g.sqrt(g.add(meanSquare, g.scalar(c.config.rmsNormEps)))), weight);
}

/** [x₁·cos − x₂·sin, x₂·cos + x₁·sin] on [B, heads, T, hd]. */
function rope(c: Context, x: ValueId, half: number): ValueId {
  const { g } = c;
  const x1 = g.slice(x, [0], [half], [-1]);
  const x2 = g.slice(x, [half], [2 * half], [-1]);
  const first = g.sub(g.mul(x1, c.cos), g.mul(x2, c.sin));
  const second = g.add(g.mul(x2, c.cos), g.mul(x1, c.sin));
  return g.concat([first, second], -1);
}

/** [B, T, heads·hd] → [B, heads, T, hd]. */
function splitHeads(c: Context, x: ValueId, heads: number): ValueId {
  return c.g.transpose(c.g.reshape(x, [0, 0, heads, headDim(c.config)]), [0, 2, 1, 3]);
}

/** One attention block: returns the projected context [B, T, D] and the new keys/values [B, KV, T, hd]. */
function attention(c: Context, layer: number, h: ValueId, pastKey: ValueId, pastValue: ValueId) {
  const { g, config } = c;
  const p = `layers.${layer}.`;
  const hd = headDim(config);
  const H = config.numHeads;
  const KV = config.numKvHeads;
  let q = linear(c, `${p}wq`, h); // [B, T, H·hd]
  let k = linear(c, `${p}wk`, h); // [B, T, KV·hd]
  let v = linear(c, `${p}wv`, h); // [B, T, KV·hd]
  if (config.attentionBias) {
    q = g.add(q, c.weights.get(`${p}bq`)!);
    k = g.add(k, c.weights.get(`${p}bk`)!);
    v = g.add(v, c.weights.get(`${p}bv`)!);
  }
  let qh = splitHeads(c, q, H); // [B, H, T, hd]
  let kh = splitHeads(c, k, KV); // [B, KV, T, hd]
  if (config.qkNorm) {
    qh = rmsNorm(c, qh, c.weights.get(`${p}qNorm`)!);
    kh = rmsNorm(c, kh, c.weights.get(`${p}kNorm`)!);
  }
  qh = rope(c, qh, hd / 2);
  kh = rope(c, kh, hd / 2);
  const vh = splitHeads(c, v, KV); // [B, KV, T, hd]
  // Query heads grouped by their KV head (HF repeat_kv order: head = kv·G + g): [B, KV, G·T, hd].
  const qg = g.reshape(qh, [0, KV, -1, hd]);
  const scale = g.scalar(1 / Math.sqrt(hd));
  const scores = g.concat(
    [g.matMul(qg, g.transpose(pastKey, [0, 1, 3, 2])), g.matMul(qg, g.transpose(kh, [0, 1, 3, 2]))],
    -1,
  ); // [B, KV, G·T, S+T]
  const biased = g.add(g.mul(g.reshape(scores, [0, H, -1, 0]), scale), c.bias); // [B, H, T, S+T]
  const weights = g.reshape(g.softmax(biased, -1), [0, KV, -1, 0]); // [B, KV, G·T, S+T]
  const zero = g.int64s([0]);
  const toCache = g.sliceDynamic(weights, zero, c.cacheLength, [-1], 'S');
  const toNew = g.sliceDynamic(weights, c.cacheLength, c.fullLength, [-1], 'T');
  const context = g.add(g.matMul(toCache, pastValue), g.matMul(toNew, vh)); // [B, KV, G·T, hd]
  const merged = g.reshape(g.transpose(g.reshape(context, [0, H, -1, hd]), [0, 2, 1, 3]), [0, 0, H * hd]); // [B, T, H·hd]
  return { out: linear(c, `${p}wo`, merged), key: kh, value: vh };
}

function mlp(c: Context, layer: number, h: ValueId): ValueId {
  const p = `layers.${layer}.`;
  const gate = linear(c, `${p}wGate`, h);
  const activated = c.g.mul(gate, c.g.sigmoid(gate)); // silu
  return linear(c, `${p}wDown`, c.g.mul(activated, linear(c, `${p}wUp`, h)));
}

/** The output heads on the final hidden states [B, T, D]. */
function heads(c: Context, x: ValueId): void {
  const { g, config } = c;
  const final = rmsNorm(c, x, c.weights.get('finalNorm')!);
  const rows = g.gather(
    g.reshape(final, [-1, config.hiddenSize]),
    g.graph.input(modelGraphInputs.headRows, 'int32', ['M']),
    0,
  ); // [M, D]
  // Scaled before the head, so the [M, V] logits are the only tensor of that size.
  const scaled = g.mul(rows, g.graph.input(modelGraphInputs.invTemperature, 'float32', [1])); // [M, D]
  const raw = config.tieWordEmbeddings
    ? g.gemm(scaled, c.weights.get('embed')!, { transB: true })
    : g.matMul(scaled, c.weights.get('lmHead')!);
  const logits = g.graph.output(raw, 'logits'); // [M, V]
  const targets = g.unsqueeze(g.graph.input(modelGraphInputs.targets, 'int32', ['M']), [1]); // [M, 1]
  const picked = g.sub(g.gatherElements(logits, targets, 1), g.reduce('ReduceLogSumExp', logits, [1])); // [M, 1]
  g.graph.output(g.reshape(picked, [-1]), 'target_logprobs');
  if (config.valueHead) {
    const values = g.add(g.reshape(g.matMul(rows, c.weights.get('valueHead.w')!), [-1]), c.weights.get('valueHead.b')!);
    g.graph.output(values, 'values');
  }
}

/** The forward graph for a config and its weights (see the module comment for inputs and outputs). */
export function buildModelGraph({ config, params, lora = null }: ModelGraphOptions): Graph {
  const g = new GraphBuilder(new Graph({ opset: 17 }));
  const hd = headDim(config);
  const weights = new Map<string, ValueId>();
  for (const [name, shape] of parameterShapes(config)) {
    const tensor = params.get(name)!;
    weights.set(name, g.graph.initializer(name, { dtype: 'float32', shape, data: tensor.data }));
  }
  const adapters = new Map<string, { a: ValueId; b: ValueId }>();
  if (lora !== null) {
    for (const [name, shape] of loraShapes(config, lora)) {
      if (!name.endsWith('.loraA')) continue;
      const weight = name.slice(0, -'.loraA'.length);
      const b = loraShapes(config, lora).get(`${weight}.loraB`)!;
      adapters.set(weight, {
        a: g.graph.input(name, 'float32', shape),
        b: g.graph.input(`${weight}.loraB`, 'float32', b),
      });
    }
  }
  const tokens = g.graph.input(modelGraphInputs.tokens, 'int32', ['B', 'T']);
  const unsqueezeTable = (name: string) => g.unsqueeze(g.graph.input(name, 'float32', ['B', 'T', hd / 2]), [1]); // [B, 1, T, hd/2]
  const cos = unsqueezeTable(modelGraphInputs.cos);
  const sin = unsqueezeTable(modelGraphInputs.sin);
  const bias = g.graph.input(modelGraphInputs.bias, 'float32', ['B', 1, 'T', 'S+T']);
  const pastKeys = Array.from({ length: config.numLayers }, (_, i) =>
    g.graph.input(pastKeyName(i), 'float32', ['B', config.numKvHeads, 'S', hd]),
  );
  const pastValues = Array.from({ length: config.numLayers }, (_, i) =>
    g.graph.input(pastValueName(i), 'float32', ['B', config.numKvHeads, 'S', hd]),
  );
  const biasShape = g.shapeOf(bias);
  const c: Context = {
    g,
    config,
    weights,
    adapters,
    loraScale: lora === null ? null : g.scalar(loraScale(lora)),
    cos,
    sin,
    bias,
    cacheLength: g.slice(g.shapeOf(at(pastKeys, 0, 'pastKeys')), [2], [3], [0]),
    fullLength: g.slice(biasShape, [3], [4], [0]),
  };
  let x = g.gather(weights.get('embed')!, tokens, 0); // [B, T, D]
  for (let i = 0; i < config.numLayers; i++) {
    const p = `layers.${i}.`;
    const block = attention(
      c,
      i,
      rmsNorm(c, x, weights.get(`${p}attnNorm`)!),
      at(pastKeys, i, 'pastKeys'),
      at(pastValues, i, 'pastValues'),
    );
    g.graph.output(block.key, keyOutputName(i));
    g.graph.output(block.value, valueOutputName(i));
    x = g.add(x, block.out);
    x = g.add(x, mlp(c, i, rmsNorm(c, x, weights.get(`${p}mlpNorm`)!)));
  }
  heads(c, x);
  return g.graph;
}
