import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import type { Tool } from '../core/types.ts';
import { calculatorTool } from '../envs/calculator/env.ts';
import { renderChat } from '../chat/chat-template.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { hasFinalAnswer, hasToolCall, stepCountIs } from './stop-conditions.ts';
import { runToolLoop } from './tool-calling.ts';
import { at } from '../core/indexing.ts';

const call = (name: string, args: unknown): string =>
  `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;

const submit: Tool<{ answer: number }> = {
  name: 'submit',
  description: 'Submits the answer.',
  inputSchema: z.object({ answer: z.number() }),
  execute: ({ answer }) => `submitted ${answer}`,
};

describe('tool-calling loop (scripted policy)', () => {
  test('normal run: a tool call, its result as a tool message, then the final answer; the trajectory is the rendered conversation', async () => {
    const policy = new ScriptedPolicy({
      reply: [`<think>multiply</think>${call('calculator', { expression: '17 * 23' })}`, 'The answer is 391.'],
      logprob: -0.5,
    });
    const result = await runToolLoop({ policy, tools: [calculatorTool], prompt: 'What is 17 * 23?' });
    assert.equal(result.stopReason, 'stop-condition');
    assert.equal(result.finalAnswer, 'The answer is 391.');
    assert.equal(result.steps.length, 2);
    assert.deepEqual(at(result.steps, 0).results, [
      { call: { id: 'call_0_0', name: 'calculator', arguments: { expression: '17 * 23' } }, output: '391' },
    ]);
    assert.deepEqual(
      result.messages.slice(2).map((message) => [message.role, message.content]),
      [
        ['assistant', `<think>multiply</think>${call('calculator', { expression: '17 * 23' })}`],
        ['tool', '391'],
        ['assistant', 'The answer is 391.'],
      ],
    );
    assert.match(at(result.messages, 0).content, /"name":"calculator"/, 'the system message lists the tool schema');

    const { trajectory } = result;
    assert.deepEqual(
      trajectory.tokens,
      renderChat(result.messages).tokens,
      'ids are the chat-template rendering of the conversation',
    );
    const generated = trajectory.tokens.filter((_, t) => trajectory.lossMask[t] === 1);
    assert.equal(
      byteTokenizer.decode(generated),
      `${at(result.messages, 2).content}<|end|>${at(result.messages, 4).content}<|end|>`,
    );
    trajectory.logprobs.forEach((logprob, t) => {
      assert.equal(logprob, trajectory.lossMask[t] === 1 ? -0.5 : 0);
    });
    assert.equal(trajectory.turns.length, 2);
    assert.equal(at(trajectory.turns, 0).observation, '391');
    assert.equal(trajectory.success, true);
    assert.equal(trajectory.truncated, false);
  });

  test('invalid arguments, an unknown tool and a throwing tool come back to the model as observations', async () => {
    const policy = new ScriptedPolicy({
      reply: [
        call('calculator', { expression: 5 }),
        call('search', { query: 'x' }),
        call('calculator', { expression: '2 +' }),
        'I give up.',
      ],
    });
    const result = await runToolLoop({ policy, tools: [calculatorTool, submit], prompt: 'Compute.' });
    const [first, second, third] = result.steps.slice(0, 3).map((step) => at(step.results, 0));
    assert.equal(first?.error, 'invalid-arguments');
    assert.match(
      first?.output ?? '',
      /^invalid arguments for calculator: expression: .*expected string, received number/,
    );
    assert.deepEqual(
      [second?.error, second?.output],
      ['unknown-tool', 'unknown tool "search"; allowed: calculator, submit'],
    );
    assert.equal(third?.error, 'tool-error');
    assert.match(third?.output ?? '', /^error: /);
    assert.equal(result.finalAnswer, 'I give up.');
    assert.deepEqual(
      result.trajectory.turns.map((turn) => turn.invalidAction),
      [true, true, true, false],
    );
  });
});

describe('tool-calling loop (scripted policy): malformed calls', () => {
  test('a malformed <tool_call> gets a user message saying so and the loop goes on', async () => {
    const policy = new ScriptedPolicy({ reply: ['<tool_call>{"name": "calculator", "arguments": {</tool_call>', '4'] });
    const result = await runToolLoop({ policy, tools: [calculatorTool], prompt: 'What is 2 + 2?' });
    assert.deepEqual(at(result.steps, 0).malformed, ['<tool_call>{"name": "calculator", "arguments": {</tool_call>']);
    assert.equal(at(result.steps, 0).finalAnswer, undefined);
    assert.match(at(result.messages, 3).content, /^Error: malformed tool call/);
    assert.equal(result.finalAnswer, '4');

    const cut = await runToolLoop({
      policy: new ScriptedPolicy({ reply: [call('calculator', { expression: '2 + 2' }), '4'] }),
      tools: [calculatorTool],
      prompt: 'Q',
      sampling: { maxNewTokens: 20 },
    });
    assert.deepEqual(
      at(cut.steps, 0).malformed,
      ['<tool_call>{"name":"'],
      'a reply cut inside <tool_call> is malformed, not an answer',
    );
    assert.equal(cut.finalAnswer, '4');
  });

  test('an unclosed <tool_call> after closed blocks is malformed from its last tag on', async () => {
    const reply = `${call('calculator', { expression: '1 + 1' })} <tool_call>{</tool_call> and <tool_call>{"name": "calcu`;
    const result = await runToolLoop({
      policy: new ScriptedPolicy({ reply: [reply, '2'] }),
      tools: [calculatorTool],
      prompt: 'Q',
    });
    assert.deepEqual(at(result.steps, 0).malformed, ['<tool_call>{</tool_call>', '<tool_call>{"name": "calcu']);
    assert.equal(at(result.steps, 0).results.length, 1, 'the closed valid call still runs');
  });
});

describe('tool-calling loop (scripted policy): stop conditions and budgets', () => {
  test('composable stop conditions: a given tool called, a step count; a final answer no condition takes gets a continue prompt', async () => {
    const replies = [
      'thinking aloud',
      call('calculator', { expression: '6 * 7' }),
      call('submit', { answer: 42 }),
      'never reached',
    ];
    const bySubmit = await runToolLoop({
      policy: new ScriptedPolicy({ reply: replies }),
      tools: [calculatorTool, submit],
      prompt: 'Q',
      stopWhen: [hasToolCall('submit'), stepCountIs(10)],
    });
    assert.equal(bySubmit.steps.length, 3);
    assert.equal(bySubmit.stopReason, 'stop-condition');
    assert.equal(at(bySubmit.messages, 3).content, 'Go on: call a tool or give your final answer.');
    assert.equal(at(at(bySubmit.steps, 2).results, 0).output, 'submitted 42');

    const byCount = await runToolLoop({
      policy: new ScriptedPolicy({ reply: replies }),
      tools: [calculatorTool, submit],
      prompt: 'Q',
      stopWhen: stepCountIs(2),
    });
    assert.equal(byCount.steps.length, 2);
    const byAnswer = await runToolLoop({
      policy: new ScriptedPolicy({ reply: replies }),
      tools: [calculatorTool, submit],
      prompt: 'Q',
      stopWhen: hasFinalAnswer((answer) => answer.startsWith('never')),
    });
    assert.equal(byAnswer.steps.length, 4);
    assert.equal(byAnswer.finalAnswer, 'never reached');
  });

  test('budget exhaustion: the context window or maxSteps ends the loop, truncated', async () => {
    const looping = () =>
      new ScriptedPolicy({ reply: [call('calculator', { expression: '1 + 1' })], contextWindow: 900 });
    const windowed = await runToolLoop({
      policy: looping(),
      tools: [calculatorTool],
      prompt: 'Loop.',
      stopWhen: hasFinalAnswer(),
      sampling: { maxNewTokens: 64 },
    });
    assert.equal(windowed.stopReason, 'context-window');
    assert.ok(windowed.steps.length >= 2, `${windowed.steps.length} steps before the window ran out`);
    assert.ok(windowed.trajectory.tokens.length + 65 > 900);
    assert.equal(windowed.trajectory.truncated, true);
    assert.equal(windowed.trajectory.success, false);

    const capped = await runToolLoop({
      policy: looping(),
      tools: [calculatorTool],
      prompt: 'Loop.',
      stopWhen: hasFinalAnswer(),
      maxSteps: 2,
      sampling: { maxNewTokens: 64 },
    });
    assert.equal(capped.stopReason, 'max-steps');
    assert.equal(capped.steps.length, 2);
  });
});
