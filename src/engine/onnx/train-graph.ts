/**
 * The LoRA training graph: the model's forward (model-graph.ts, full sequences with one masked
 * cache slot) plus the heads a TokenLoss reads, the surrogate the trainer back-propagates and,
 * from autodiff.ts, its gradients with respect to every adapter — split in a forward and a
 * backward graph (split-graph.ts), so a loss that reads the current policy sees the forward run's
 * log-probs and the backward run reuses its activations instead of running the forward again.
 *
 *   entropies[m] = −Σ_v p log p = logsumexp(l) − Σ_v p l,  p = softmax(l = logits[m])   [M]
 *   surrogate    = Σ_m ∂L/∂logπ[m] · logπ[m] (+ ∂L/∂H[m] · H[m]) (+ ∂L/∂V[m] · V[m])   []
 *   grad.{name}  = ∂surrogate/∂{name} for every `layers.{i}.{w}.loraA|loraB`
 *
 * The loss itself stays a pure JS function (core/loss.ts): its gradient with respect to the
 * per-token log-probs (entropies, values) arrives as the cotangent inputs, exactly as the jax-js
 * model's surrogate (model.ts) takes it.
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { HostParams, ModelConfig } from '../../model/config.ts';
import { loraShapes, type LoraConfig } from '../../model/lora.ts';
import { addGradients } from './autodiff.ts';
import type { Graph, ValueId } from './graph.ts';
import { buildModelGraph } from './model-graph.ts';
import { GraphBuilder } from './ops.ts';
import { splitGraph, type SplitGraphs } from './split-graph.ts';

/** The heads a loss reads (and therefore the cotangent inputs of the surrogate). */
export interface TrainHeads {
  entropy: boolean;
  /** The value term enters the surrogate (a value head whose loss does not detach it from the trunk). */
  value: boolean;
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
 * H = logsumexp(l) − Σ softmax(l) · l per row of logits [M, V], reusing the logsumexp the model
 * graph computed for the target log-probs: two passes over [M, V] (Softmax, Mul) besides it.
 */
function entropyOf(g: GraphBuilder, logits: ValueId): ValueId {
  const lse =
    g.graph.nodes.find((node) => node.op === 'ReduceLogSumExp' && node.inputs[0] === logits)?.outputs[0] ??
    g.reduce('ReduceLogSumExp', logits, [1]); // [M, 1]
  const expected = g.reduceSum(g.mul(g.softmax(logits, 1), logits), [1], true); // [M, 1]
  return g.reshape(g.sub(lse, expected), [-1]); // [M]
}

/**
 * The training graphs for a model and the heads a loss reads: `forward` (scored heads +
 * activations, also what scoring runs) and `backward` (surrogate + adapter gradients), split at
 * the forward/backward boundary (split-graph.ts).
 */
export function buildTrainGraphs({
  config,
  params,
  lora,
  heads,
}: {
  config: ModelConfig;
  params: HostParams;
  lora: LoraConfig;
  heads: TrainHeads;
}): SplitGraphs & { scored: string[] } {
  const graph = buildModelGraph({ config, params, lora });
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
  if (heads.value) surrogate = g.add(surrogate, weightedSum(g, values!, trainGraphNames.gradValues));
  g.graph.output(surrogate, trainGraphNames.surrogate);
  const names = [...loraShapes(config, lora).keys()];
  const gradients = addGradients(
    g,
    surrogate,
    names.map((name) => valueNamed(graph, graph.inputs, name)),
  );
  gradients.forEach((gradient, i) => {
    g.graph.output(
      at(g.graph.node('Identity', [gradient], {}, [{ dtype: 'float32', shape: g.shape(gradient) }]), 0),
      gradientName(at(names, i)),
    );
  });
  const split = splitGraph(graph, { boundary, firstBackwardValue, forwardOutputs: scored });
  return { ...split, scored: scored.map((id) => graph.info(id).name) };
}
