/**
 * A `Policy` (the built-in model being trained or loaded by `serve-policy`, `OpenAIPolicy` in front
 * of vLLM with `returnTokenIds`, `TinkerPolicy`, `ScriptedPolicy`, …) as the batched generator the
 * OpenAI endpoints run — the one generation path of serve-policy and the training gateway.
 *
 * A policy that honours `generateBatch`'s `onToken` (the built-in one) streams: each sampled id
 * reaches the endpoints, and so the client, as it is sampled. For any other policy the ids of a
 * row are handed over once its generation is done (a streamed reply then arrives in one burst).
 * Either way each id is handed over exactly once, in order, and they are the ids the policy
 * returned: a policy whose streamed ids differ from its result is refused,
 * since the recorded call would not be what was sampled (a `ServedPolicyError`).
 *
 * An `onToken` of the caller that throws (the batcher's when every row's client has left) ends
 * the policy's generation there: a policy that streams stops sampling for nobody. The batch's
 * `signal` reaches `generateBatch` too, so a policy that does not stream (an `OpenAIPolicy`)
 * cancels its upstream requests when nobody waits.
 */
import { at } from '../../core/indexing.ts';
import type { Policy } from '../../policy/types.ts';
import type { TokenGenerator } from './batcher.ts';
import { ServedPolicyError } from './served-policy-errors.ts';

/** The batched generator of the OpenAI endpoints over `policy.generateBatch`. */
export function policyGenerator(policy: Policy): TokenGenerator {
  return async (prompts, options) => {
    const { maxNewTokens, temperature, topP, stopTokens, stopStrings, seed } = options;
    const streamed = prompts.map(() => ({ tokens: [] as number[], logprobs: [] as number[] }));
    const generations = await policy.generateBatch(
      prompts.map((prompt) => ({ prompt, maxNewTokens, temperature, topP, stopTokens, stopStrings, seed })),
      {
        ...(options.signal === undefined ? {} : { signal: options.signal }),
        onToken: (row, token, logprob) => {
          const own = at(streamed, row, 'streamed rows');
          own.tokens.push(token);
          own.logprobs.push(logprob);
          options.onToken(row, token, logprob);
        },
      },
    );
    generations.forEach((generation, row) => {
      const { tokens, logprobs } = at(streamed, row, 'streamed rows');
      if (tokens.length === 0) {
        generation.tokens.forEach((token, i) => {
          options.onToken(row, token, at(generation.logprobs, i, 'generation logprobs'));
        });
        return;
      }
      if (tokens.join() !== generation.tokens.join() || logprobs.join() !== generation.logprobs.join()) {
        throw new ServedPolicyError(
          `the policy's onToken ids of row ${row} (${tokens.length}) are not the ids it returned (${generation.tokens.length}); a policy that calls onToken must call it for each returned id, in order`,
          { row },
        );
      }
    });
    return generations.map(({ tokens, logprobs, text, finishReason }) => ({ tokens, logprobs, text, finishReason }));
  };
}
