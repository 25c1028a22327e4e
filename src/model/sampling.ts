/**
 * Host-side token sampling from one row of logits: temperature, nucleus (top-p; Holtzman et al.
 * 2020) and greedy. The log-prob returned is that of the sampled token under the temperature-
 * scaled full distribution — the same quantity `score()` computes with the same temperature — so
 * the trainer's old log-probs match (top-p truncation is a sampling device, not part of π).
 */
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
    const z = at(logits, offset + i, 'logits') * invTemperature;
    scratch[i] = z;
    if (z > max) {
      max = z;
      argmax = i;
    }
  }
  let total = 0;
  for (let i = 0; i < vocab; i++) {
    const p = Math.exp(at(scratch, i, 'scratch') - max);
    scratch[i] = p;
    total += p;
  }
  const logTotal = Math.log(total);
  // Ids at or above sampledVocab are never drawn: drop their mass from the sampling weights.
  let drawable = total;
  for (let i = sampledVocab; i < vocab; i++) {
    drawable -= at(scratch, i, 'scratch');
    scratch[i] = 0;
  }
  if (argmax >= sampledVocab) {
    argmax = 0;
    for (let i = 1; i < sampledVocab; i++) if (at(scratch, i, 'scratch') > at(scratch, argmax, 'scratch')) argmax = i;
  }
  const logprobOf = (token: number): number => at(logits, offset + token, 'logits') * invTemperature - max - logTotal;
  if (options.temperature <= 0) return { token: argmax, logprob: logprobOf(argmax) };

  let token = -1;
  if (options.topP < 1) {
    for (let i = 0; i < vocab; i++) order[i] = i;
    const sorted = order.subarray(0, vocab).sort((a, b) => at(scratch, b, 'scratch') - at(scratch, a, 'scratch'));
    const threshold = options.topP * drawable;
    let kept = 0;
    let mass = 0;
    while (kept < vocab && mass < threshold) mass += at(scratch, at(sorted, kept++, 'sorted'), 'scratch');
    let u = rng.next() * mass;
    for (let k = 0; k < kept; k++) {
      const candidate = at(sorted, k, 'sorted');
      u -= at(scratch, candidate, 'scratch');
      if (u <= 0) {
        token = candidate;
        break;
      }
    }
    if (token < 0) token = at(sorted, kept - 1, 'sorted');
  } else {
    let u = rng.next() * drawable;
    for (let i = 0; i < sampledVocab; i++) {
      u -= at(scratch, i, 'scratch');
      if (u <= 0) {
        token = i;
        break;
      }
    }
    if (token < 0) token = argmax;
  }
  return { token, logprob: logprobOf(token) };
}
