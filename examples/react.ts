/** ReAct with a lookup tool and the calculator: `npx tsx examples/react.ts` (see policy.ts for the policy). */
import { z } from 'zod';
import { runReAct } from '../src/agents/react.ts';
import type { Tool } from '../src/core/types.ts';
import { calculatorTool } from '../src/envs/calculator/env.ts';
import type { Policy } from '../src/policy/types.ts';
import { examplePolicy, runIfMain } from './policy.ts';

const populations: Record<string, number> = { Paris: 2_103_000, Lyon: 522_000, Marseille: 873_000 };
export const lookup: Tool<string> = {
  name: 'population',
  description: 'The population of a French city, e.g. population[Lyon].',
  inputSchema: z.string(),
  execute: (city) => {
    const value = populations[city.trim()];
    if (value === undefined) throw new Error(`unknown city "${city}"; known: ${Object.keys(populations).join(', ')}`);
    return value;
  },
};

export async function example(policy: Policy, { maxSteps = 6, maxNewTokens = 200 } = {}) {
  const result = await runReAct({
    policy,
    tools: [
      lookup,
      { ...calculatorTool, description: 'Integer arithmetic, e.g. calculator[{"expression": "2 + 3"}].' },
    ],
    question: 'How many people live in Lyon and Marseille together?',
    maxSteps,
    sampling: { maxNewTokens, temperature: 0 },
    reward: (answer) => (answer.replace(/[^0-9]/g, '') === '1395000' ? 1 : 0),
  });
  return {
    answer: result.answer,
    stopReason: result.stopReason,
    steps: result.steps,
    reward: result.trajectory.totalReward,
    tokens: result.trajectory.tokens.length,
  };
}

runIfMain(import.meta.url, async () => {
  const { policy, label } = await examplePolicy();
  console.log(`ReAct on ${label}`);
  const result = await example(policy);
  for (const step of result.steps)
    console.log(`Thought: ${step.thought}\nAction: ${step.action}[${step.input}]\nObservation: ${step.observation}\n`);
  console.log(
    `answer: ${result.answer ?? '(none)'} · stop: ${result.stopReason} · reward ${result.reward} · trajectory ${result.tokens} tokens`,
  );
});
