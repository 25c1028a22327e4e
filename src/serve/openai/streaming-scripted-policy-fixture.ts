/**
 * A scripted `Policy` for the server tests that streams as the built-in one does: a
 * `ScriptedPolicy`'s reply, each id handed to `generateBatch`'s `onToken` in order (as if sampled)
 * before the batch resolves. `onRequest` sees every request it is asked (prompt, stop ids, budget).
 */
import { ScriptedPolicy, type ScriptedPolicyOptions } from '../../policy/scripted-policy.ts';
import type { GenerateBatchOptions, GenerateRequest, Generation, Policy } from '../../policy/types.ts';
import { at } from '../../core/indexing.ts';

export interface StreamingScriptedOptions extends ScriptedPolicyOptions {
  /** Called with each request before its reply is made. */
  onRequest?: (request: GenerateRequest) => void;
}

export function streamingScriptedPolicy({ onRequest, ...options }: StreamingScriptedOptions): Policy {
  const scripted = new ScriptedPolicy(options);
  const generateBatch = async (
    requests: readonly GenerateRequest[],
    { onToken }: GenerateBatchOptions = {},
  ): Promise<Generation[]> => {
    for (const request of requests) onRequest?.(request);
    const generations = await scripted.generateBatch(requests);
    generations.forEach((generation, row) => {
      generation.tokens.forEach((token, i) => {
        onToken?.(row, token, at(generation.logprobs, i, 'logprobs'));
      });
    });
    return generations;
  };
  return {
    tokenizer: scripted.tokenizer,
    contextWindow: scripted.contextWindow,
    ...(scripted.chatFormat === undefined ? {} : { chatFormat: scripted.chatFormat }),
    generateBatch,
    generate: async (request) => at(await generateBatch([request]), 0, 'generations'),
  };
}
