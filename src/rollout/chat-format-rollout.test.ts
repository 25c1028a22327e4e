import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import { formatToolCalls } from '../chat/tool-call-format.ts';
import type { Action, Env, Message } from '../core/types.ts';
import { makeCalculator, type CalculatorTask } from '../envs/calculator/env.ts';
import { toolSchema } from '../policy/openai-wire.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { rollout } from './rollout.ts';
import { at } from '../core/indexing.ts';

/** Two turns: the observation, then "again", then done. */
const twoTurnEnv = (): Env => {
  let turn = 0;
  return {
    name: 'two-turn',
    instructions: 'Answer briefly.',
    async reset() {
      turn = 0;
      return { text: 'first question' };
    },
    async step() {
      turn++;
      return turn < 2
        ? { observation: { text: 'again' }, reward: 0, done: false, truncated: false, info: {} }
        : { observation: { text: 'done' }, reward: 1, done: true, truncated: false, info: { success: true } };
    },
  };
};

test("a policy carrying a ChatFormat is rendered for with the model's template: the trajectory is its rendering, replies masked with their stop token", async () => {
  const format = tinyChatmlFormat();
  const policy = new ScriptedPolicy({ reply: ['one', 'two'], tokenizer: format.tokenizer, chatFormat: format });
  const { trajectories } = await rollout({ policy, env: twoTurnEnv, seeds: [0], maxNewTokens: 16 });
  const trajectory = at(trajectories, 0);
  const messages = [
    { role: 'system' as const, content: 'Answer briefly.' },
    { role: 'user' as const, content: 'first question' },
    { role: 'assistant' as const, content: 'one' },
    { role: 'user' as const, content: 'again' },
    { role: 'assistant' as const, content: 'two' },
  ];
  const expected = format.render(messages);
  // The rendering ends "two<|im_end|>\n"; the trajectory ends with the last reply's stop token and its "\n".
  assert.equal(format.tokenizer.decode(trajectory.tokens), format.tokenizer.decode(expected.tokens));
  assert.deepEqual(trajectory.tokens, expected.tokens);
  assert.deepEqual(trajectory.lossMask, expected.assistantMask);
  assert.equal(trajectory.totalReward, 1);
  assert.deepEqual(
    trajectory.turns.map((turn) => turn.action),
    ['one', 'two'],
  );
});

/** The calculator env, recording each action it is stepped with. */
function recordingCalculator(actions: Action[]): () => Env<CalculatorTask> {
  return () => {
    const env = makeCalculator();
    return {
      name: env.name,
      tools: env.tools,
      instructions: env.instructions,
      reset: (options) => env.reset(options),
      step: async (action) => {
        actions.push(action);
        return env.step(action);
      },
    };
  };
}

test("in the model's format: env.tools in the prompt, a <tool_call>[…] reply reaches env.step as a structured toolCall, its result comes back as a tool message; ids = render(conversation, { tools }), loss on exactly the replies", async () => {
  const format = tinyChatmlFormat();
  const call = { id: 'call_0_0', name: 'calculator', arguments: { expression: '(2 + 3) * 4' } };
  const callText = formatToolCalls('smollm2', [call]);
  assert.equal(callText, '<tool_call>[{"name": "calculator", "arguments": {"expression": "(2 + 3) * 4"}}]</tool_call>');
  const policy = new ScriptedPolicy({
    reply: [callText, '<answer>20</answer>'],
    tokenizer: format.tokenizer,
    chatFormat: format,
  });
  const actions: Action[] = [];
  const { trajectories } = await rollout({
    policy,
    env: recordingCalculator(actions),
    tasks: [{ expression: '(2 + 3) * 4' }],
    seeds: [0],
    maxNewTokens: 160,
  });
  const trajectory = at(trajectories, 0);

  assert.deepEqual(actions, [{ text: callText, toolCall: call }, { text: '<answer>20</answer>' }]);
  const calculator = makeCalculator();
  const conversation: Message[] = [
    { role: 'system', content: calculator.instructions },
    { role: 'user', content: '(2 + 3) * 4' },
    { role: 'assistant', content: '', toolCalls: [call] },
    { role: 'tool', content: '<tool_response>20</tool_response>', toolCallId: call.id, name: 'calculator' },
    { role: 'assistant', content: '<answer>20</answer>' },
  ];
  const expected = format.render(conversation, { tools: calculator.tools.map(toolSchema) });
  assert.deepEqual(trajectory.tokens, expected.tokens);
  assert.deepEqual(trajectory.lossMask, expected.assistantMask);
  const text = format.tokenizer.decode(trajectory.tokens);
  assert.match(text, /You can call these tools:\n<tools>\n\{"name": "calculator"/);
  assert.match(
    text,
    /<\|im_start\|>tool\n<tool_response>20<\/tool_response><\|im_end\|>\n<\|im_start\|>assistant\n<answer>20<\/answer><\|im_end\|>\n$/,
  );
  const masked = trajectory.tokens.filter((_, i) => trajectory.lossMask[i] === 1);
  assert.equal(format.tokenizer.decode(masked), `${callText}<|im_end|><answer>20</answer><|im_end|>`);
  assert.deepEqual([trajectory.totalReward, trajectory.success], [1, true]);
});

test('bounded history in the model format: each segment is the rendering of system + kept turns + the tool message, then the reply', async () => {
  const format = tinyChatmlFormat();
  const call = { id: 'call_0_0', name: 'calculator', arguments: { expression: '2 * 3' } };
  const callText = formatToolCalls('smollm2', [call]);
  const policy = new ScriptedPolicy({
    reply: [callText, '<answer>6</answer>'],
    tokenizer: format.tokenizer,
    chatFormat: format,
  });
  const { trajectories } = await rollout({
    policy,
    env: recordingCalculator([]),
    tasks: [{ expression: '2 * 3' }],
    seeds: [0],
    historyTurns: 0,
    maxNewTokens: 160,
  });
  const segment = at(at(trajectories, 0).segments ?? [], 1);
  const tools = makeCalculator().tools.map(toolSchema);
  // historyTurns 0: the second turn sees the system prompt and the tool message only.
  const expected = format.render(
    [
      { role: 'system', content: makeCalculator().instructions },
      { role: 'tool', content: '<tool_response>6</tool_response>', toolCallId: call.id, name: 'calculator' },
      { role: 'assistant', content: '<answer>6</answer>' },
    ],
    { tools },
  );
  assert.equal(format.tokenizer.decode(segment.tokens), format.tokenizer.decode(expected.tokens));
  assert.deepEqual(segment.lossMask, expected.assistantMask);
});
