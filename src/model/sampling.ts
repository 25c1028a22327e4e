/**
 * Host-side token sampling from one row of logits: temperature, nucleus (top-p; Holtzman et al.
 * 2020) and greedy. The log-prob returned is that of the sampled token under the temperature-
 * scaled full distribution — the same quantity `score()` computes with the same temperature — so
 * the trainer's old log-probs match (top-p truncation is a sampling device, not part of π).
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
 * Samples from `logits[offset .. offset+vocab)`. `scratch` (length ≥ vocab) avoids allocation
 * in the generation loop.
 *
 * Cost per row (V = 49,152): one pass for z = l/T and its max, one Math.exp pass (the floor, ~8 ns
 * a value), then a scan to the drawn token. Top-p sorts only the tokens that can be in the nucleus
 * (p ≥ (1 − topP)·mass / 2V: the rest together hold less than the mass the nucleus leaves out), in
 * the order a full stable sort gives them, so the kept set, its mass and the draw are those of a
 * sort over the whole vocabulary.
 */
export function sampleToken(
  logits: Float32Array,
  offset: number,
  vocab: number,
  options: SampleOptions,
  rng: Rng,
  scratch: Float64Array,
  order: Int32Array,
  /** Only ids below this are sampled (default: all); the log-prob still uses the full vocabulary. */
  sampledVocab: number = vocab,
): SampledToken {
  if (offset < 0 || offset + vocab > logits.length || scratch.length < vocab || order.length < vocab) {
    throw new IndexOutOfRangeError('logits row', offset + vocab - 1, Math.min(logits.length, scratch.length));
  }
  const invTemperature = options.temperature > 0 ? 1 / options.temperature : 1;
  const row = logits.subarray(offset, offset + vocab);
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < vocab; i++) {
    const z = (row[i] ?? 0) * invTemperature;
    scratch[i] = z;
    if (z > max) {
      max = z;
      argmax = i;
    }
  }
  let total = 0;
  for (let i = 0; i < vocab; i++) {
    const p = Math.exp((scratch[i] ?? 0) - max);
    scratch[i] = p;
    total += p;
  }
  const logTotal = Math.log(total);
  // Ids at or above sampledVocab are never drawn: drop their mass from the sampling weights.
  let drawable = total;
  for (let i = sampledVocab; i < vocab; i++) {
    drawable -= scratch[i] ?? 0;
    scratch[i] = 0;
  }
  if (argmax >= sampledVocab) {
    argmax = 0;
    for (let i = 1; i < sampledVocab; i++) if ((scratch[i] ?? 0) > (scratch[argmax] ?? 0)) argmax = i;
  }
  const logprobOf = (token: number): number => at(row, token, 'logits') * invTemperature - max - logTotal;
  if (options.temperature <= 0) return { token: argmax, logprob: logprobOf(argmax) };
  const token =
    options.topP < 1
      ? drawNucleus(scratch, order, vocab, options.topP * drawable, (1 - options.topP) * drawable, rng)
      : drawAll(scratch, sampledVocab, drawable, rng, argmax);
  return { token, logprob: logprobOf(token) };
}

/** The first id (in id order) at which the running sum passes u·drawable; argmax if rounding leaves none. */
function drawAll(weights: Float64Array, sampledVocab: number, drawable: number, rng: Rng, argmax: number): number {
  let u = rng.next() * drawable;
  for (let i = 0; i < sampledVocab; i++) {
    u -= weights[i] ?? 0;
    if (u <= 0) return i;
  }
  return argmax;
}

/**
 * Nucleus draw: the most probable ids (ties in id order) until their mass reaches `threshold`,
 * then a draw in that order. Sorts the candidates p ≥ leftOut/2V first; only if they cannot reach
 * the threshold (rounding) does it sort the whole vocabulary.
 */
function drawNucleus(
  weights: Float64Array,
  order: Int32Array,
  vocab: number,
  threshold: number,
  leftOut: number,
  rng: Rng,
): number {
  const floor = leftOut / (2 * vocab);
  let candidates = 0;
  for (let i = 0; i < vocab; i++) if ((weights[i] ?? 0) >= floor) order[candidates++] = i;
  let kept = keptCount(weights, order, candidates, vocab, threshold);
  if (kept < 0) {
    for (let i = 0; i < vocab; i++) order[i] = i;
    candidates = vocab;
    kept = keptCount(weights, order, vocab, vocab, threshold);
  }
  const sorted = order.subarray(0, candidates);
  let mass = 0;
  for (let k = 0; k < kept; k++) mass += weights[sorted[k] ?? 0] ?? 0;
  let u = rng.next() * mass;
  for (let k = 0; k < kept; k++) {
    const candidate = sorted[k] ?? 0;
    u -= weights[candidate] ?? 0;
    if (u <= 0) return candidate;
  }
  return at(sorted, kept - 1, 'sorted');
}

/** Sorts order[0, n) by weight (descending, stable) and returns how many reach `threshold`, or −1 if all n do not. */
function keptCount(weights: Float64Array, order: Int32Array, n: number, vocab: number, threshold: number): number {
  const sorted = order.subarray(0, n).sort((a, b) => (weights[b] ?? 0) - (weights[a] ?? 0));
  let kept = 0;
  let mass = 0;
  while (kept < n && mass < threshold) mass += weights[sorted[kept++] ?? 0] ?? 0;
  return mass < threshold && n < vocab ? -1 : kept;
}
