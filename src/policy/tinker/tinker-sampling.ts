/** How TinkerPolicy samples a batch: a seed per row, greedy duplicates sampled once, and the server's ids as a Generation. */
import type { Tokenizer } from '../../chat/tokenizer.ts';
import { generationText, type ResolvedRequest } from '../request.ts';
import { firstStopStringEnd } from '../scripted-policy.ts';
import type { Generation } from '../types.ts';

/**
 * The server seed of row `index` of a batch whose requests carry `seed`: rows of one batch sample
 * differently (as the built-in policy's shared batch sampler does), row 0 uses the request's own
 * seed (a batch of one equals `generate`), and the server's int32 PRNG seed range is respected.
 */
export function rowSeed(seed: number, index: number): number {
  return (((seed >>> 0) + Math.imul(index, 0x9e3779b1)) >>> 0) % 2 ** 31;
}

/**
 * For each request of a batch, the index of the first request it duplicates: equal greedy
 * (temperature 0) requests — same prompt, length, top-p and stops; the seed does not matter — map to the
 * first of them; every other request maps to itself (sampled rows get their own seeds).
 */
export function greedyDuplicates(requests: readonly ResolvedRequest[]): number[] {
  const seen = new Map<string, number>();
  return requests.map((request, index) => {
    if (request.temperature !== 0) return index;
    const key = JSON.stringify([
      request.prompt,
      request.maxNewTokens,
      request.topP,
      request.stopTokens,
      request.stopStrings,
    ]);
    const first = seen.get(key);
    if (first !== undefined) return first;
    seen.set(key, index);
    return index;
  });
}

/** A sampled sequence as a `Generation`: stop strings cut here, finishReason from the last id. */
export function toGeneration(
  sampled: readonly number[],
  sampledLogprobs: readonly number[],
  request: ResolvedRequest,
  tokenizer: Tokenizer,
): Generation {
  let tokens = sampled.slice(0, request.maxNewTokens);
  let logprobs = sampledLogprobs.slice(0, tokens.length);
  const stopIndex = tokens.findIndex((id) => request.stopTokens.includes(id));
  if (stopIndex >= 0) {
    tokens = tokens.slice(0, stopIndex + 1);
    logprobs = logprobs.slice(0, stopIndex + 1);
  }
  const stopAt = stopIndex >= 0 ? undefined : firstStopStringEnd(tokens, request.stopStrings, tokenizer);
  if (stopAt !== undefined) {
    tokens = tokens.slice(0, stopAt);
    logprobs = logprobs.slice(0, stopAt);
  }
  const finishReason: Generation['finishReason'] = stopIndex >= 0 || stopAt !== undefined ? 'stop' : 'length';
  return { tokens, logprobs, text: generationText(tokens, finishReason, request, tokenizer), finishReason };
}
