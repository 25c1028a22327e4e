/**
 * Host-side token sampling from one row of probabilities — the model's softmax at the row's
 * temperature, computed by the engine's graph (max-shifted log-softmax, then exp: engine/onnx
 * model-graph.ts `probabilities`) — with nucleus truncation (top-p; Holtzman et al. 2020) and
 * greedy. The log-prob returned is that of the sampled token under the full temperature-scaled
 * distribution, log p — the same quantity `score()` computes with the same temperature — so the
 * trainer's old log-probs match (top-p truncation is a sampling device, not part of π).
 */
import { IndexOutOfRangeError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { Rng } from '../core/rng.ts';

export interface SampleOptions {
  /** 0 = greedy. */
  temperature: number;
  /** Keep the smallest set of tokens whose probability sum reaches topP (1 = off). */
  topP: number;
}

export interface SampledToken {
  token: number;
  logprob: number;
}

/**
 * Samples from the probabilities `probabilities[offset .. offset+vocab)` (of the temperature the
 * options name; greedy rows may carry any temperature's). `order` (length ≥ vocab) is scratch.
 *
 * Cost per row (V = 49,152): one pass for the drawable mass and the argmax, then a scan to the
 * drawn token — no exp (the engine's vectorised softmax did it). Top-p sorts only the tokens that
 * can be in the nucleus (p ≥ (1 − topP)·mass / 2V: the rest together hold less than the mass the
 * nucleus leaves out), in the order a full stable sort gives them, so the kept set, its mass and
 * the draw are those of a sort over the whole vocabulary.
 */
export function sampleToken(
  probabilities: Float32Array,
  offset: number,
  vocab: number,
  options: SampleOptions,
  rng: Rng,
  order: Int32Array,
  /** Only ids below this are sampled (default: all); the log-prob still uses the full vocabulary. */
  sampledVocab: number = vocab,
): SampledToken {
  if (offset < 0 || offset + vocab > probabilities.length || order.length < vocab) {
    throw new IndexOutOfRangeError('probabilities row', offset + vocab - 1, probabilities.length);
  }
  const row = probabilities.subarray(offset, offset + sampledVocab);
  // Ids at or above sampledVocab are never drawn: their mass is left out of the sampling weights.
  let drawable = 0;
  let argmax = 0;
  let max = -1;
  for (let i = 0; i < row.length; i++) {
    const p = row[i] ?? 0;
    drawable += p;
    if (p > max) {
      max = p;
      argmax = i;
    }
  }
  const logprobOf = (token: number): number => Math.log(at(row, token, 'probabilities'));
  if (options.temperature <= 0) return { token: argmax, logprob: logprobOf(argmax) };
  const token =
    options.topP < 1
      ? drawNucleus(row, order, options.topP * drawable, (1 - options.topP) * drawable, rng)
      : drawAll(row, drawable, rng, argmax);
  return { token, logprob: logprobOf(token) };
}

/** The first id (in id order) of non-zero weight at which the running sum passes u·drawable; argmax if rounding leaves none. */
function drawAll(weights: Float32Array, drawable: number, rng: Rng, argmax: number): number {
  let u = rng.next() * drawable;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i] ?? 0;
    u -= w;
    if (u <= 0 && w > 0) return i;
  }
  return argmax;
}

/**
 * Nucleus draw: the most probable ids (ties in id order) until their mass reaches `threshold`,
 * then a draw in that order. Sorts the candidates p ≥ leftOut/2V first; only if they cannot reach
 * the threshold (rounding) does it sort the whole row.
 */
function drawNucleus(weights: Float32Array, order: Int32Array, threshold: number, leftOut: number, rng: Rng): number {
  const vocab = weights.length;
  const floor = leftOut / (2 * vocab);
  let candidates = 0;
  for (let i = 0; i < vocab; i++) if ((weights[i] ?? 0) >= floor) order[candidates++] = i;
  let kept = keptCount(weights, order, candidates, threshold);
  if (kept < 0) {
    for (let i = 0; i < vocab; i++) order[i] = i;
    candidates = vocab;
    kept = keptCount(weights, order, vocab, threshold);
  }
  const sorted = order.subarray(0, candidates);
  let mass = 0;
  for (let k = 0; k < kept; k++) mass += weights[sorted[k] ?? 0] ?? 0;
  let u = rng.next() * mass;
  for (let k = 0; k < kept; k++) {
    const candidate = sorted[k] ?? 0;
    const w = weights[candidate] ?? 0;
    u -= w;
    if (u <= 0 && w > 0) return candidate;
  }
  return at(sorted, kept - 1, 'sorted');
}

/** Sorts order[0, n) by weight (descending, stable) and returns how many reach `threshold`, or −1 if all n do not (n < the row). */
function keptCount(weights: Float32Array, order: Int32Array, n: number, threshold: number): number {
  const sorted = order.subarray(0, n).sort((a, b) => (weights[b] ?? 0) - (weights[a] ?? 0));
  let kept = 0;
  let mass = 0;
  while (kept < n && mass < threshold) mass += weights[sorted[kept++] ?? 0] ?? 0;
  return mass < threshold && n < weights.length ? -1 : kept;
}
