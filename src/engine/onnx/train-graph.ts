/**
 * The training graph: the model's forward (model-graph.ts, full sequences without a cache, the
 * weights fed as inputs) plus the heads a TokenLoss reads, the surrogate the trainer
 * back-propagates and, from autodiff.ts, its gradients with respect to every trained array — the
 * adapters and the value head under LoRA (with the dropout masks as inputs when p > 0), else every weight — split in a forward and a
 * backward graph (split-graph.ts), so a loss that reads the current policy sees the forward run's
 * log-probs and the backward run reuses its activations instead of running the forward again.
 *
 *   entropies[m] = −Σ_v p log p,  log p = LogSoftmax(l = logits[m]) (the model graph's)      [M]
 *   surrogate    = Σ_m ∂L/∂logπ[m] · logπ[m] (+ ∂L/∂H[m] · H[m]) (+ ∂L/∂V[m] · V[m])   []
 *   grad.{name}  = ∂surrogate/∂{name} for every `layers.{i}.{w}.loraA|loraB`, or every weight
 *
 * The loss itself stays a pure JS function (core/loss.ts): its gradient with respect to the
 * per-token log-probs (entropies, values) arrives as the cotangent inputs. The weights are inputs, not initializers: onnxruntime
 * then holds no copy of them (the feeds wrap the host arrays), full fine-tuning differentiates
 * them, and new weights need no new session.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { parameterShapes, type ModelConfig } from '../../model/config.ts';
import { loraShapes, type LoraConfig } from '../../model/lora.ts';
import { parameterNames } from '../../model/params.ts';
import { addGradients } from './autodiff.ts';
import type { Graph, ValueId } from './graph.ts';
import { buildModelGraph } from './model-graph.ts';
import { GraphBuilder } from './ops.ts';
import { splitGraph, type SplitGraphs, wholeGraph } from './split-graph.ts';

/** The heads a loss reads (and therefore the cotangent inputs of the surrogate). */
export interface TrainHeads {
  entropy: boolean;
  /** The value term enters the surrogate. */
  value: boolean;
  /** The value head reads the trunk through a stop-gradient (the value loss trains the head alone). */
  detachValue: boolean;
}

/**
 * The arrays a trainer trains, by name and shape: every weight (canonical order), or under LoRA
 * the adapters and the value head (PEFT's `modules_to_save`: a fresh head has nothing to keep).
 */
export function trainedShapes(config: ModelConfig, lora: LoraConfig | null): Map<string, number[]> {
  if (lora === null) return parameterShapes(config);
  const shapes = loraShapes(config, lora);
  for (const [name, shape] of parameterShapes(config)) if (name.startsWith('valueHead')) shapes.set(name, shape);
  return shapes;
}

/** The names of `trainedShapes`: the arrays a train graph differentiates. */
export function trainedNames(config: ModelConfig, lora: LoraConfig | null): string[] {
  return lora === null ? parameterNames(config) : [...trainedShapes(config, lora).keys()];
}

export const trainGraphNames = {
  gradLogprobs: 'grad_logprobs',
  gradEntropies: 'grad_entropies',
  gradValues: 'grad_values',
  entropies: 'entropies',
  surrogate: 'surrogate',
} as const;

export const gradientName = (adapter: string): string => `grad.${adapter}`;

function valueNamed(graph: Graph, ids: readonly ValueId[], name: string): ValueId {
  const id = ids.find((v) => graph.info(v).name === name);
  if (id === undefined) throw new InvalidArgumentError(`train graph: the model graph has no value "${name}"`);
  return id;
}

/** Σ head · cotangent for one head [M] and its cotangent input. */
function weightedSum(g: GraphBuilder, head: ValueId, cotangentName: string): ValueId {
  const cotangent = g.graph.input(cotangentName, 'float32', ['M']);
  return g.reduceSum(g.mul(head, cotangent), [0], false);
}

/**
 * H = −Σ exp(log p) · log p per row of logits [M, V], reusing the max-shifted LogSoftmax the model
 * graph computed for the target log-probs (no logsumexp − Σ p·l cancellation): two passes over
 * [M, V] (Exp, Mul) besides it.
 */
function entropyOf(g: GraphBuilder, logits: ValueId): ValueId {
  const logProbs =
    g.graph.nodes.find((node) => node.op === 'LogSoftmax' && node.inputs[0] === logits)?.outputs[0] ??
    g.logSoftmax(logits, 1); // [M, V]
  return g.neg(g.reduceSum(g.mul(g.exp(logProbs), logProbs), [1], false)); // [M]
}

/** Appends the entropy head to a model graph (model-graph.ts) and returns it [M]. */
export function entropyHead(g: GraphBuilder): ValueId {
  return entropyOf(g, valueNamed(g.graph, g.graph.outputs, 'logits'));
}

export interface TrainGraphInput {
  config: ModelConfig;
  /** LoRA settings (its dropout > 0 adds the mask inputs), or null for full fine-tuning. */
  lora: LoraConfig | null;
  heads: TrainHeads;
}

/** The forward + backward graph before its split, with where the backward begins and its outputs. */
interface TrainGraph {
  graph: Graph;
  boundary: number;
  firstBackwardValue: number;
  /** The scored heads: target_logprobs, entropies (and values). */
  scored: ValueId[];
  /** The surrogate, then each trained array's gradient. */
  trained: ValueId[];
}

function buildTrainGraph({ config, lora, heads }: TrainGraphInput): TrainGraph {
  const graph = buildModelGraph({
    config,
    lora,
    weights: 'inputs',
    cache: false,
    dropout: lora !== null && lora.dropout > 0,
    detachValue: heads.detachValue,
  });
  const g = new GraphBuilder(graph);
  const logits = valueNamed(graph, graph.outputs, 'logits');
  const logprobs = valueNamed(graph, graph.outputs, 'target_logprobs');
  const entropies = g.graph.output(entropyOf(g, logits), trainGraphNames.entropies);
  const values = config.valueHead ? valueNamed(graph, graph.outputs, 'values') : null;
  const scored = [logprobs, entropies, ...(values === null ? [] : [values])];
  const boundary = graph.nodes.length;
  const firstBackwardValue = graph.values.length;
  let surrogate = weightedSum(g, logprobs, trainGraphNames.gradLogprobs);
  if (heads.entropy) surrogate = g.add(surrogate, weightedSum(g, entropies, trainGraphNames.gradEntropies));
  if (heads.value && values !== null) surrogate = g.add(surrogate, weightedSum(g, values, trainGraphNames.gradValues));
  g.graph.output(surrogate, trainGraphNames.surrogate);
  const names = trainedNames(config, lora);
  const gradients = addGradients(
    g,
    surrogate,
    names.map((name) => valueNamed(graph, graph.inputs, name)),
  );
  const trained = gradients.map((gradient, i) =>
    g.graph.output(
      at(g.graph.node('Identity', [gradient], {}, [{ dtype: 'float32', shape: g.shape(gradient) }]), 0),
      gradientName(at(names, i)),
    ),
  );
  return { graph, boundary, firstBackwardValue, scored, trained: [surrogate, ...trained] };
}

/**
 * The training graphs for a model and the heads a loss reads: `forward` (scored heads +
 * activations) and `backward` (surrogate + gradients), split at the forward/backward boundary
 * (split-graph.ts): the loss reads the forward's heads between the two runs.
 */
export function buildTrainGraphs(input: TrainGraphInput): SplitGraphs & { scored: string[] } {
  const { graph, boundary, firstBackwardValue, scored } = buildTrainGraph(input);
  const split = splitGraph(graph, { boundary, firstBackwardValue, forwardOutputs: scored });
  return { ...split, scored: scored.map((id) => graph.info(id).name) };
}

/**
 * The training graph in one piece (split-graph.ts `wholeGraph`): target_logprobs, the surrogate and
 * the gradients from one run, for cotangents known before it (a loss that does not read the
 * forward's heads, or one computed on an earlier scoring run of the same weights).
 */
export function buildWholeTrainGraph(input: TrainGraphInput): Graph {
  const { graph, scored, trained } = buildTrainGraph(input);
  return wholeGraph(graph, [at(scored, 0), ...trained]);
}
