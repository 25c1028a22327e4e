/** The tool-calling loop with stop conditions: `npx tsx examples/tool-calling.ts`. */
import { z } from 'zod';
import { hasFinalAnswer, hasToolCall, stepCountIs } from '../src/agents/stop-conditions.ts';
import { runToolLoop } from '../src/agents/tool-calling.ts';
import type { Tool } from '../src/core/types.ts';
import { calculatorTool } from '../src/envs/calculator/env.ts';
import type { Policy } from '../src/policy/types.ts';
import { examplePolicy, runIfMain } from './policy.ts';

const submit: Tool<{ answer: number }> = {
  name: 'submit',
  description: 'Submits the final number.',
  inputSchema: z.object({ answer: z.number() }),
  execute: ({ answer }) => `submitted ${answer}`,
};

export async function example(policy: Policy, { steps = 6, maxNewTokens = 200 } = {}) {
  const result = await runToolLoop({
    policy,
    tools: [calculatorTool, submit],
    system: 'Use the calculator, then submit the result.',
    prompt: 'What is (17 * 23) - 45?',
    stopWhen: [hasToolCall('submit'), hasFinalAnswer(), stepCountIs(steps)],
    sampling: { maxNewTokens, temperature: 0 },
  });
  return {
    stopReason: result.stopReason,
    finalAnswer: result.finalAnswer,
    steps: result.steps,
    tokens: result.trajectory.tokens.length,
  };
}

runIfMain(import.meta.url, async () => {
  const { policy, label } = await examplePolicy();
  console.log(`tool calling on ${label}`);
  const result = await example(policy);
  for (const step of result.steps)
    console.log(`reply: ${step.text}\n${step.results.map((r) => `  ${r.call.name} → ${r.output}`).join('\n')}`);
  console.log(
    `stop: ${result.stopReason} · final answer: ${result.finalAnswer ?? '(none)'} · trajectory ${result.tokens} tokens`,
  );
});
