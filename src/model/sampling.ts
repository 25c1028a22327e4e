/**
 * Host-side token sampling from one row of logits: temperature, nucleus (top-p; Holtzman et al.
 * 2020) and greedy. The log-prob returned is that of the sampled token under the temperature-
 * scaled full distribution — the same quantity `score()` computes with the same temperature — so
 * the trainer's old log-probs match (top-p truncation is a sampling device, not part of π).
 */
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
  const invTemperature = options.temperature > 0 ? 1 / options.temperature : 1;
  let max = -Infinity;
  let argmax = 0;
  for (let i = 0; i < vocab; i++) {
    const z = logits[offset + i]! * invTemperature;
    scratch[i] = z;
    if (z > max) {
      max = z;
      argmax = i;
    }
  }
  let total = 0;
  for (let i = 0; i < vocab; i++) {
    const p = Math.exp(scratch[i]! - max);
    scratch[i] = p;
    total += p;
  }
  const logTotal = Math.log(total);
  // Ids at or above sampledVocab are never drawn: drop their mass from the sampling weights.
  let drawable = total;
  for (let i = sampledVocab; i < vocab; i++) {
    drawable -= scratch[i]!;
    scratch[i] = 0;
  }
  if (argmax >= sampledVocab) {
    argmax = 0;
    for (let i = 1; i < sampledVocab; i++) if (scratch[i]! > scratch[argmax]!) argmax = i;
  }
  const logprobOf = (token: number): number => logits[offset + token]! * invTemperature - max - logTotal;
  if (options.temperature <= 0) return { token: argmax, logprob: logprobOf(argmax) };

  let token = -1;
  if (options.topP < 1) {
    for (let i = 0; i < vocab; i++) order[i] = i;
    const sorted = order.subarray(0, vocab).sort((a, b) => scratch[b]! - scratch[a]!);
    const threshold = options.topP * drawable;
    let kept = 0;
    let mass = 0;
    while (kept < vocab && mass < threshold) mass += scratch[sorted[kept++]!]!;
    let u = rng.next() * mass;
    for (let k = 0; k < kept; k++) {
      u -= scratch[sorted[k]!]!;
      if (u <= 0) {
        token = sorted[k]!;
        break;
      }
    }
    if (token < 0) token = sorted[kept - 1]!;
  } else {
    let u = rng.next() * drawable;
    for (let i = 0; i < sampledVocab; i++) {
      u -= scratch[i]!;
      if (u <= 0) {
        token = i;
        break;
      }
    }
    if (token < 0) token = argmax;
  }
  return { token, logprob: logprobOf(token) };
}
