/**
 * The onnxruntime sessions a trainer runs (train-graph.ts): per combination of loss heads, a
 * forward session (scored heads + the activations the backward reads) and a backward session
 * (surrogate + gradients of the trained arrays), and the two in one session (a run whose cotangents
 * are known before it: no activations cross to the host); and one scoring session (the model graph
 * with the entropy head, no activations kept). Every graph takes the weights as inputs, so the
 * sessions hold no copy of them and stay valid when the weights change.
 */
import { entry } from '../../core/indexing.ts';
import { parameterShapes, type ModelConfig } from '../../model/config.ts';
import type { LoraConfig } from '../../model/lora.ts';
import { elementCount, type Graph } from './graph.ts';
import { buildModelGraph } from './model-graph.ts';
import { GraphBuilder } from './ops.ts';
import { serializeModel } from './serialize.ts';
import { OnnxSession, type Feed, type HostArray } from './session.ts';
import {
  buildTrainGraphs,
  buildWholeTrainGraph,
  entropyHead,
  gradientName,
  trainGraphNames,
  type TrainHeads,
} from './train-graph.ts';
import type { OnnxTrainerOptions } from './train-runs.ts';

/**
 * Models up to this many parameters train with ORT's memory arena: their runs allocate a few MB
 * a tensor, and without the arena each allocation goes back to the system and page-faults in
 * again (bench:engine's tiny GPT step in a probe, 2 threads: 250 → 213 ms). A larger model's runs (SmolLM2:
 * hundreds of MB) return their buffers after each run instead, so the forward, backward and
 * scoring sessions do not each keep their own peak.
 */
export const ARENA_MAX_PARAMETERS = 16_000_000;

function parameterCount(config: ModelConfig): number {
  let count = 0;
  for (const shape of parameterShapes(config).values()) count += elementCount(shape);
  return count;
}

/** The forward and backward sessions of one head combination, and what crosses from one to the other. */
export interface SessionPair {
  forward: OnnxSession;
  backward: OnnxSession;
  /** The forward graph's scored heads (target_logprobs, entropies, values). */
  scored: string[];
  /** Forward outputs the backward graph reads, with their dtypes. */
  transferred: { name: string; dtype: Feed['dtype'] }[];
}

export type RunOutputs = Record<string, { shape: number[]; data: HostArray }>;

/** The feeds a session declares (ORT refuses unknown names). */
export function pick(feeds: Record<string, Feed>, names: readonly string[]): Record<string, Feed> {
  return Object.fromEntries(names.map((name) => [name, entry(feeds, name, 'feed')]));
}

const headsKey = (heads: TrainHeads): string => `${heads.entropy}:${heads.value}:${heads.detachValue}`;

/** The fetches of a run that trains: the surrogate and the gradient of each of `names`. */
const trainedFetches = (names: readonly string[]): string[] => [trainGraphNames.surrogate, ...names.map(gradientName)];

/** The surrogate and the gradient of each of `names` from a run's outputs (`trainedFetches`). */
export function trainedOutputs(
  out: RunOutputs,
  names: readonly string[],
): { surrogate: number; gradients: Map<string, Float32Array> } {
  const surrogate = (entry(out, trainGraphNames.surrogate, 'run output').data as Float32Array)[0] ?? 0;
  const gradients = new Map(
    names.map((name) => [name, entry(out, gradientName(name), 'run output').data as Float32Array]),
  );
  return { surrogate, gradients };
}

export class TrainSessions {
  private readonly pairs = new Map<string, Promise<SessionPair>>();
  private readonly wholes = new Map<string, Promise<OnnxSession>>();
  private scoring: Promise<OnnxSession> | null = null;

  constructor(
    private readonly config: ModelConfig,
    private readonly lora: LoraConfig | null,
    private readonly options: OnnxTrainerOptions,
  ) {}

  private session(graph: Graph): Promise<OnnxSession> {
    return OnnxSession.create(serializeModel(graph), {
      threads: this.options.threads,
      memoryArena: parameterCount(this.config) <= ARENA_MAX_PARAMETERS,
    });
  }

  /** The forward/backward pair for a head combination (built on first use). */
  pair(heads: TrainHeads): Promise<SessionPair> {
    const key = headsKey(heads);
    let pair = this.pairs.get(key);
    if (pair === undefined) {
      pair = (async () => {
        const graphs = buildTrainGraphs({ config: this.config, lora: this.lora, heads });
        const types = new Map(
          graphs.backward.inputs.map((id) => [graphs.backward.info(id).name, graphs.backward.info(id).dtype]),
        );
        const forward = await this.session(graphs.forward);
        const backward = await this.session(graphs.backward);
        return {
          forward,
          backward,
          scored: graphs.scored,
          transferred: graphs.transferred.map((name) => ({ name, dtype: types.get(name) ?? 'float32' })),
        };
      })();
      this.pairs.set(key, pair);
    }
    return pair;
  }

  /** The scoring session: log-probs, entropies (and values), without dropout masks or activations. */
  scorer(): Promise<OnnxSession> {
    if (this.scoring === null) {
      const graph = buildModelGraph({ config: this.config, lora: this.lora, weights: 'inputs', cache: false });
      const g = new GraphBuilder(graph);
      g.graph.output(entropyHead(g), trainGraphNames.entropies);
      this.scoring = this.session(graph);
    }
    return this.scoring;
  }

  /** One scoring run for a loss: target log-probs and entropies (and values, with a value head). */
  async scoreRun(feeds: Record<string, Feed>): Promise<RunOutputs> {
    const session = await this.scorer();
    const fetches = ['target_logprobs', trainGraphNames.entropies, ...(this.config.valueHead ? ['values'] : [])];
    return session.run(pick(feeds, session.inputNames), fetches);
  }

  /** One forward run of a pair: the scored heads and the activations the backward graph reads. */
  forward(pair: SessionPair, feeds: Record<string, Feed>): Promise<RunOutputs> {
    const fetches = [...new Set([...pair.scored, ...pair.transferred.map((t) => t.name)])];
    return pair.forward.run(pick(feeds, pair.forward.inputNames), fetches);
  }

  /**
   * One run's target log-probs, surrogate and gradients of `names`: in one piece, or the backward
   * on the activations its `forward` run kept. `feeds` carries the cotangents; the backward's
   * transferred activations are added to it.
   */
  async train(
    sessions: { whole: OnnxSession } | { pair: SessionPair; forward: RunOutputs },
    feeds: Record<string, Feed>,
    names: readonly string[],
  ): Promise<RunOutputs> {
    const fetches = trainedFetches(names);
    if ('whole' in sessions) {
      const { whole } = sessions;
      return whole.run(pick(feeds, whole.inputNames), ['target_logprobs', ...fetches]);
    }
    const { pair, forward } = sessions;
    for (const { name, dtype } of pair.transferred) {
      const { shape, data } = entry(forward, name, 'run output');
      feeds[name] = { dtype, shape, data };
    }
    return { ...forward, ...(await pair.backward.run(pick(feeds, pair.backward.inputNames), fetches)) };
  }

  /** The one-piece forward + backward session for a head combination (built on first use). */
  whole(heads: TrainHeads): Promise<OnnxSession> {
    const key = headsKey(heads);
    let session = this.wholes.get(key);
    if (session === undefined) {
      session = this.session(buildWholeTrainGraph({ config: this.config, lora: this.lora, heads }));
      this.wholes.set(key, session);
    }
    return session;
  }

  async release(): Promise<void> {
    for (const pair of this.pairs.values()) {
      const { forward, backward } = await pair;
      await forward.release();
      await backward.release();
    }
    this.pairs.clear();
    for (const session of this.wholes.values()) await (await session).release();
    this.wholes.clear();
    if (this.scoring !== null) await (await this.scoring).release();
    this.scoring = null;
  }
}
