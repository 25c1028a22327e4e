/** The scripted sampler the gateway tests serve: deterministic replies, each request remembered, optionally slowed down. */
import { ScriptedPolicy, type ScriptContext } from '../../policy/scripted-policy.ts';
import type { GenerateRequest, Generation, Policy } from '../../policy/types.ts';

/** A scripted sampler that remembers each request and can be slowed down. */
export function sampler(
  reply: (context: ScriptContext) => string,
  { delayMs = 0 } = {},
): Policy & { requests: GenerateRequest[] } {
  const scripted = new ScriptedPolicy({ reply, logprob: -0.25 });
  const requests: GenerateRequest[] = [];
  const wait = () => new Promise((resolve) => setTimeout(resolve, delayMs));
  return {
    tokenizer: scripted.tokenizer,
    contextWindow: 4096,
    requests,
    async generate(request: GenerateRequest): Promise<Generation> {
      requests.push(request);
      await wait();
      return scripted.generate(request);
    },
    async generateBatch(batch: readonly GenerateRequest[]): Promise<Generation[]> {
      requests.push(...batch);
      await wait();
      return scripted.generateBatch(batch);
    },
  };
}

export const lastUser = (context: ScriptContext) =>
  [...context.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
