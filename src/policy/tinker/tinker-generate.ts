/**
 * A batch of generation requests as Tinker sampling calls: rows that share a prompt and sampling
 * options are ONE asample with `num_samples` = their count (the prompt prefilled once, as the SDK
 * and cookbook sample a GRPO group), equal greedy rows are sampled once and copied, and distinct
 * prompts are sampled in parallel (at most `concurrency` requests in flight).
 */
import type { Tokenizer } from '../../chat/tokenizer.ts';
import { at } from '../../core/indexing.ts';
import { resolveRequest, type ResolvedRequest } from '../request.ts';
import type { GenerateRequest, Generation } from '../types.ts';
import type { TinkerSampler } from './tinker-sampler.ts';
import { rowSeed, toGeneration } from './tinker-sampling.ts';

/** Rows grouped by what the server samples them from: the prompt and every option but the seed. */
export function samplingGroups(requests: readonly ResolvedRequest[]): number[][] {
  const groups = new Map<string, number[]>();
  requests.forEach((request, index) => {
    const key = JSON.stringify([
      request.prompt,
      request.maxNewTokens,
      request.temperature,
      request.topP,
      request.stopTokens,
      request.stopStrings,
    ]);
    const group = groups.get(key) ?? [];
    group.push(index);
    groups.set(key, group);
  });
  return [...groups.values()];
}

export async function sampleBatch(
  sampler: TinkerSampler,
  requests: readonly GenerateRequest[],
  { tokenizer, contextWindow, concurrency }: { tokenizer: Tokenizer; contextWindow: number; concurrency: number },
): Promise<Generation[]> {
  // The server's model may have more rows than the tokenizer has ids (Qwen3: 151,936 rows, 151,669
  // ids) and samples the spare ones; a later turn's prompt carries what it sampled. Its vocabulary
  // is not known here: the server refuses an id beyond it.
  const resolved = requests.map((request) =>
    resolveRequest(request, tokenizer, contextWindow, Number.MAX_SAFE_INTEGER),
  );
  const groups = samplingGroups(resolved);
  const results = new Array<Generation>(resolved.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < groups.length) {
      const rows = at(groups, next++, 'sampling groups');
      const firstRow = at(rows, 0, 'rows');
      const request = at(resolved, firstRow, 'requests');
      // A greedy generation is a function of its request: sampled once, copied to its duplicates.
      const count = request.temperature === 0 ? 1 : rows.length;
      const sequences = await sampler.sample(request.prompt, count, {
        max_tokens: Math.min(
          request.maxNewTokens,
          Number.isFinite(contextWindow) ? contextWindow - request.prompt.length : Infinity,
        ),
        seed: rowSeed(request.seed, firstRow),
        stop: [...request.stopTokens],
        temperature: request.temperature,
        top_k: -1,
        top_p: request.topP,
      });
      rows.forEach((row, index) => {
        const sequence = at(sequences, Math.min(index, count - 1), 'sequences');
        results[row] = toGeneration(sequence.tokens, sequence.logprobs, at(resolved, row, 'requests'), tokenizer);
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, groups.length) }, worker));
  return results;
}
