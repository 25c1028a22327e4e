/**
 * Issue 17's acceptance: agents written with real frameworks are trained UNCHANGED by GRPO
 * through `runRl` + the gateway. Each agent is ordinary framework code whose only link to agentrl
 * is the base URL and session header it is handed; the task is trivial (reply in lowercase letters:
 * reward = share of a–z characters in the final reply) so a tiny random built-in model moves its
 * reward within a few iterations. Seeded and run one agent at a time, so every run replays exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, tool } from 'ai';
import OpenAI from 'openai';
import { z } from 'zod';
import { at } from '../../core/indexing.ts';
import { TransformerModel } from '../../engine/transformer-model.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import { makeBanditEnv } from '../../train/bandit-test-fixture.ts';
import { runRl } from '../../train/rl.ts';
import { gatewayCollect, type AgentRun } from './gateway-collect.ts';
import { startGateway } from './gateway.ts';

const tiny = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 2,
  intermediateSize: 64,
  maxSeqLen: 512,
};
const config = {
  algo: 'grpo' as const,
  iterations: 8,
  tasksPerIteration: 2,
  groupSize: 6,
  maxTurns: 2,
  maxNewTokens: 12,
  validationEpisodes: 1,
  learningRate: 3e-2,
  seed: 3,
};

/** The share of lowercase letters in a reply. */
function lowercaseShare(text: string): number {
  return text.length === 0 ? 0 : (text.match(/[a-z]/g) ?? []).length / text.length;
}

/** A Vercel AI SDK agent with a zod tool and a stop condition, as its author wrote it. */
async function aiSdkAgent(run: AgentRun): Promise<string> {
  const provider = createOpenAICompatible({ name: 'my-agent', baseURL: run.baseURL, headers: run.headers });
  const result = await generateText({
    model: provider('gpt-4o-mini'),
    system: 'Reply in lowercase letters.',
    prompt: 'Describe the sea.',
    tools: {
      lookup: tool({
        description: 'Looks up a word.',
        inputSchema: z.object({ word: z.string() }),
        execute: async ({ word }) => `${word}: found`,
      }),
    },
    stopWhen: stepCountIs(2),
    maxOutputTokens: 12,
  });
  return result.text;
}

/** An `openai` SDK agent: a plain chat completion. */
async function openAiAgent(run: AgentRun): Promise<string> {
  const client = new OpenAI({ baseURL: run.baseURL, apiKey: run.apiKey, defaultHeaders: run.headers });
  const completion = await client.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'Reply in lowercase letters.' },
      { role: 'user', content: 'Describe the sea.' },
    ],
    max_tokens: 12,
  });
  return at(completion.choices, 0, 'choices').message.content ?? '';
}

async function trainThroughGateway(agent: (run: AgentRun) => Promise<string>, modelSeed: number): Promise<number[]> {
  const model = await TransformerModel.create(tiny, { seed: modelSeed });
  const policy = new BuiltinPolicy({ model });
  const reference = new BuiltinPolicy({
    model: await TransformerModel.fromParams(model.config, await model.hostParams()),
  });
  const gateway = await startGateway({ sampler: policy });
  try {
    const result = await runRl({
      policy,
      reference,
      env: makeBanditEnv,
      config,
      collect: gatewayCollect({ gateway, agent, reward: ({ output }) => lowercaseShare(output), concurrency: 1 }),
    });
    const metrics = gateway.metrics();
    assert.equal(metrics.sessionsFinished, config.iterations * config.tasksPerIteration * config.groupSize);
    assert.equal(metrics.sessionsTimedOut + metrics.sessionsDropped + metrics.callsAbandoned, 0);
    return result.history.map((entry) => entry.reward);
  } finally {
    await gateway.close();
  }
}

function mean(values: readonly number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length;
}

describe('agents written with real frameworks are trained unchanged through the gateway', () => {
  test('Vercel AI SDK (generateText, zod tool, stopWhen): GRPO raises the reward', async () => {
    const rewards = await trainThroughGateway(aiSdkAgent, 11);
    console.log(`AI SDK agent reward per iteration: ${rewards.map((r) => r.toFixed(3)).join(' ')}`);
    assert.ok(
      mean(rewards.slice(-2)) > mean(rewards.slice(0, 2)) + 0.1,
      `reward ${rewards.map((r) => r.toFixed(3)).join(' ')}`,
    );
  });

  test('openai SDK (chat.completions.create): GRPO raises the reward', async () => {
    const rewards = await trainThroughGateway(openAiAgent, 12);
    console.log(`openai SDK agent reward per iteration: ${rewards.map((r) => r.toFixed(3)).join(' ')}`);
    assert.ok(
      mean(rewards.slice(-2)) > mean(rewards.slice(0, 2)) + 0.1,
      `reward ${rewards.map((r) => r.toFixed(3)).join(' ')}`,
    );
  });
});
