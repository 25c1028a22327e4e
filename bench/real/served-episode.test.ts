import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { tinyChatmlFormat } from '../../src/chat/tiny-chatml.ts';
import { makeCalculator } from '../../src/envs/calculator/env.ts';
import { splitSeeds } from '../../src/envs/split.ts';
import { ScriptedPolicy, type ScriptContext } from '../../src/policy/scripted-policy.ts';
import { evaluate } from '../../src/rollout/index.ts';
import { startPolicyServer } from '../../src/serve/openai/policy-server.ts';
import { playServed } from './served-episode.ts';
import { chatConventions } from './variants.ts';

const env = () =>
  makeCalculator({ ...chatConventions, numOperands: 2, maxOperand: 9, operators: ['+'], parentheses: false });
const seeds = splitSeeds('test', 4);
const settings = { maxTurns: 3, maxNewTokens: 256 };

/** The last message of a ChatML prompt (before the open assistant turn): its role and content. */
function lastMessage(prompt: readonly number[]): { role: string; content: string } {
  const text = tinyChatmlFormat().tokenizer.decode([...prompt]);
  const turns = text.split('<|im_start|>');
  const match = /^(\w+)\n([\s\S]*)<\|im_end\|>\n$/.exec(turns.at(-2) ?? '');
  if (match === null || turns.at(-1) !== 'assistant\n')
    throw new Error(`not a ChatML prompt: ${JSON.stringify(text.slice(-200))}`);
  return { role: match[1] ?? '', content: match[2] ?? '' };
}

/** Calls the calculator on the question (SmolLM2's `<tool_call>[…]` format, `expression` rewritten by `edit`), then answers with the tool's result. */
function callThenAnswer(edit: (expression: string) => string) {
  return ({ prompt }: ScriptContext): string => {
    const last = lastMessage(prompt);
    if (last.role === 'tool') return `The answer is ${last.content}`;
    return `<tool_call>[{"name": "calculator", "arguments": {"expression": "${edit(last.content)}"}}]</tool_call>`;
  };
}

/** The same scripted model in process (rollout evaluate) and served (playServed over the openai client): each seed's success and call components. */
async function bothWays(reply: (context: ScriptContext) => string) {
  const format = tinyChatmlFormat();
  const policy = () =>
    new ScriptedPolicy({ reply, chatFormat: format, tokenizer: format.tokenizer, contextWindow: 4096 });
  const local = await evaluate({ policy: policy(), env, seeds, greedy: true, ...settings, instructions: true });
  const server = await startPolicyServer({ policy: policy(), modelName: 'm', port: 0 });
  try {
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    const served = [];
    for (const seed of seeds)
      served.push(
        await playServed(client, env(), seed, { model: 'm', temperature: 0, stop: [], seed: 0, ...settings }),
      );
    const verdict = (success: boolean, components: Record<string, number> | undefined) => ({
      success,
      callFormat: components?.call_format ?? 0,
      toolCall: components?.tool_call ?? 0,
    });
    return {
      local: local.trajectories.map((t) => verdict(t.success, t.rewardComponents)),
      served: served.map((e) => verdict(e.success, e.rewardComponents)),
      replies: served.map((e) => e.replies),
    };
  } finally {
    await server.close();
  }
}

test('a served model that calls the calculator then answers with its result is scored as in process: solved, well-formed call, call giving the answer', async () => {
  const { local, served, replies } = await bothWays(callThenAnswer((expression) => expression));
  assert.deepEqual(served, local);
  assert.deepEqual(
    served.map((v) => v.success),
    [true, true, true, true],
  );
  assert.ok(served.every((v) => v.callFormat === 1 && v.toolCall === 1));
  const first = replies[0] ?? [];
  assert.equal(first.length, 2, JSON.stringify(first));
  assert.match(first[0] ?? '', /^call calculator\(\{"expression": ?"\d \+ \d"\}\)$/);
  assert.match(first[1] ?? '', /^The answer is \d+$/);
});

test('a served call with the wrong expression is well-formed but neither gives the answer nor solves (tool required), as in process', async () => {
  const { local, served } = await bothWays(callThenAnswer((expression) => `${expression} + 1`));
  assert.deepEqual(served, local);
  assert.ok(
    served.every((v) => v.callFormat === 1 && v.toolCall === 0),
    JSON.stringify(served),
  );
  assert.ok(served.every((v) => !v.success));
});
