/**
 * Train the agent you already have: `npx tsx examples/gateway-ai-sdk.ts`.
 *
 * `mathAgent` is ordinary Vercel AI SDK code — `generateText` with a zod calculator tool and
 * `stopWhen: stepCountIs(3)` — whose only link to agentrl is the base URL and session header it
 * is handed. The training gateway samples its replies from the policy being trained, records
 * every call as token ids and log-probs, and `runRl` trains the policy with GRPO on the sessions.
 * The reward: 1 for the right number in the final reply, plus 0.2 × the share of the reply that is
 * digits (answers are numbers). On the tiny random model the numbers are noise and only the format
 * term moves; point a real model at it for the task itself.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { getEnvironment } from '../src/envs/index.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { gatewayCollect, startGateway, type AgentRun } from '../src/serve/gateway/index.ts';
import { runRl } from '../src/train/rl.ts';
import { runIfMain, tinyModel } from './policy.ts';

/** The task of a seed: a sum of two small numbers. */
export function question(seed: number): { text: string; answer: number } {
  const a = (seed * 7) % 20;
  const b = (seed * 13) % 20;
  return { text: `What is ${a} + ${b}?`, answer: a + b };
}

/** The agent, as its author wrote it (nothing agentrl-specific but where it connects). */
export async function mathAgent({
  baseURL,
  headers,
  seed,
}: Pick<AgentRun, 'baseURL' | 'headers' | 'seed'>): Promise<string> {
  const provider = createOpenAICompatible({ name: 'math-agent', baseURL, headers });
  const result = await generateText({
    model: provider('my-model'),
    system: 'Use the calculator, then answer with the number only.',
    prompt: question(seed).text,
    tools: {
      calculator: tool({
        description: 'Adds two numbers.',
        inputSchema: z.object({ a: z.number(), b: z.number() }),
        execute: async ({ a, b }) => String(a + b),
      }),
    },
    stopWhen: stepCountIs(3),
    maxOutputTokens: 16,
  });
  return result.text;
}

export function mathReward(reply: string, seed: number): number {
  const correct = reply.includes(String(question(seed).answer)) ? 1 : 0;
  const digits = reply.length === 0 ? 0 : (reply.match(/[0-9]/g) ?? []).length / reply.length;
  return correct + 0.2 * digits;
}

runIfMain(import.meta.url, async () => {
  console.log('gateway + AI SDK agent trained by GRPO on a tiny random built-in model (its replies are noise)');
  const model = await TransformerModel.create(tinyModel, { seed: 0 });
  const policy = new BuiltinPolicy({ model });
  const reference = new BuiltinPolicy({
    model: await TransformerModel.fromParams(model.config, await model.hostParams()),
  });
  const gateway = await startGateway({ sampler: policy });
  const bandit = getEnvironment('bandit');
  try {
    const started = performance.now();
    await runRl({
      policy,
      reference,
      env: () => bandit.make({}), // runRl validates on an env; the agent's own task is in mathReward
      config: {
        algo: 'grpo',
        iterations: 8,
        tasksPerIteration: 2,
        groupSize: 6,
        maxNewTokens: 16,
        learningRate: 3e-2,
        validationEpisodes: 1,
        seed: 1,
      },
      collect: gatewayCollect({ gateway, agent: mathAgent, reward: ({ output, seed }) => mathReward(output, seed) }),
      onIteration: (metrics) =>
        console.log(
          `iteration ${metrics.iteration}: reward ${metrics.reward.toFixed(3)} · ${metrics.episodes} sessions · ${metrics.trainedTokens} trained tokens · loss ${metrics.loss.toFixed(4)}`,
        ),
    });
    const metrics = gateway.metrics();
    console.log(
      `gateway: ${metrics.calls} calls in ${metrics.sessionsFinished} sessions · ${metrics.prefixBreaks} prefix breaks · ` +
        `${metrics.sessionsTimedOut} timed out · ${metrics.sessionsDropped} dropped · ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    await gateway.close();
  }
});
