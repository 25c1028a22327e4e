/**
 * A `Policy` (the built-in model being trained, `OpenAIPolicy` in front of vLLM with
 * `returnTokenIds`, …) as the batched generator the OpenAI endpoints run. A policy returns whole
 * generations, so a streamed reply's chunks leave when its generation is done.
 */
import type { Policy } from '../../policy/types.ts';
import type { TokenGenerator } from '../openai/batcher.ts';

export function policyGenerator(policy: Policy): TokenGenerator {
  return async (prompts, options) => {
    const { maxNewTokens, temperature, topP, stopTokens, stopStrings, seed } = options;
    const generations = await policy.generateBatch(prompts.map((prompt) => ({ prompt, maxNewTokens, temperature, topP, stopTokens, stopStrings, seed })));
    generations.forEach((generation, row) => generation.tokens.forEach((token, i) => options.onToken(row, token, generation.logprobs[i]!)));
    return generations.map(({ tokens, logprobs, text, finishReason }) => ({ tokens, logprobs, text, finishReason }));
  };
}
