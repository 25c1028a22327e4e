/**
 * What one call on an onnxruntime inference session runs with (onnx-inference.ts): the feeds of one
 * graph run, and `InferenceRuns`, the session and adapters a generation (onnx-generate.ts) or a
 * scoring call (onnx-score.ts) holds for its whole length.
 */
import type { ModelConfig } from '../../model/config.ts';
import type { Padding } from './feeds.ts';
import type { Feed, HostArray } from './session.ts';

export interface OnnxScoreOptions {
  /** Logits are divided by this before the softmax (match the sampling temperature). */
  temperature?: number;
  /** How rows are padded inside a run; the result does not depend on it (positions are per row). */
  padding?: Padding;
}

/** The graph's non-weight inputs for one run. */
export interface ForwardFeeds {
  tokens: Int32Array; // [B, T]
  rows: number;
  length: number;
  cos: Feed;
  sin: Feed;
  bias: Feed; // [B, 1, T, S + T]
  headRows: Int32Array; // [M]
  targets?: Int32Array; // [M]
  /** One for the run, or one per head row (rows sampled at different temperatures); default 1. */
  invTemperature?: number | Float32Array;
  /** Per layer [B, KV, S, hd]; default: one masked zero slot. */
  pastKeys?: Float32Array[];
  pastValues?: Float32Array[];
  cacheSlots?: number;
  /** With adapter groups (`createGroups`): the run's rows per adapter set, in order (0 allowed). */
  adapterRows?: readonly number[];
}

/**
 * What a generation or a scoring call runs on: the config and one graph run on the session and
 * adapters that were current when the call started (a `refresh` during the call does not switch
 * its weights half-way, nor release the session under it).
 */
export interface InferenceRuns {
  readonly config: ModelConfig;
  forward(
    feeds: ForwardFeeds,
    fetches: readonly string[],
  ): Promise<Record<string, { shape: number[]; data: HostArray }>>;
}
