/** MemGPT-style memory over a long conversation: `npx tsx examples/memgpt.ts`. */
import { MemGPTAgent } from '../src/agents/memgpt.ts';
import type { Policy } from '../src/policy/types.ts';
import { examplePolicy, runIfMain } from './policy.ts';

/** `short`: a one-line instruction and no function list, for a small built-in model's context. */
export async function example(
  policy: Policy,
  {
    filler = 12,
    maxNewTokens = 160,
    maxSteps = 4,
    contextBudget,
    short = false,
  }: { filler?: number; maxNewTokens?: number; maxSteps?: number; contextBudget?: number; short?: boolean } = {},
) {
  const agent = new MemGPTAgent({
    policy,
    persona: 'I am a helpful assistant with a memory.',
    sampling: { maxNewTokens, temperature: 0 },
    maxSteps,
    ...(contextBudget === undefined ? {} : { contextBudget }),
    ...(short
      ? {
          instructions:
            'Act with <tool_call> functions; save facts with archival_memory_insert; answer with send_message.',
          listFunctions: false,
        }
      : {}),
  });
  await agent.send('Please remember: my locker code is 4817.');
  for (let i = 0; i < filler; i++)
    await agent.send(`Small talk ${i + 1}: the weather today is mild and the trains run on time.`);
  const last = await agent.send('What is my locker code?');
  return {
    reply: last.reply,
    evicted: agent.evicted,
    summary: agent.summary,
    archival: agent.archival.entries.map((e) => e.text),
    segments: agent.trajectory().segments!.length,
  };
}

runIfMain(import.meta.url, async () => {
  const { policy, label } = await examplePolicy();
  console.log(`MemGPT on ${label}`);
  const builtin = Number.isFinite(policy.contextWindow) && policy.contextWindow < 4096;
  const result = await example(policy, {
    contextBudget: builtin ? Math.min(policy.contextWindow, 1024) : 4096,
    short: builtin,
  });
  console.log(
    `reply: ${result.reply ?? '(no send_message)'}\nevicted ${result.evicted} messages · summary: ${result.summary || '(none)'}\narchival: ${JSON.stringify(result.archival)} · ${result.segments} trainable segments`,
  );
});
