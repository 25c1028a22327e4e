/**
 * The shaped reward's components (rewards.ts) on hand-written replies in SmolLM2's own tool-call
 * format, read as the rollout reads them (the first `<tool_call>[…]` call becomes `action.toolCall`):
 * each component fires on what it pays for and stays 0 on its near misses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseToolCalls } from '../../chat/tool-call-format.ts';
import type { Action } from '../../core/index.ts';
import { makeCalculator, type CalculatorOptions } from './env.ts';

const shaped: CalculatorOptions = {
  answerFormat: 'last-integer',
  requireToolCall: true,
  toolResultTag: false,
  maxTurns: 3,
  callFormatReward: 0.1,
  callOperandsReward: 0.2,
  toolCallReward: 0.2,
};

/** A reply as the rollout passes it to the env in SmolLM2's format. */
function smolReply(text: string): Action {
  const call = parseToolCalls('smollm2', text).toolCalls[0];
  return call === undefined ? { text } : { text, toolCall: call };
}

const smolCall = (args: string) => `<tool_call>[{"name": "calculator", "arguments": ${args}}]</tool_call>`;

/** Plays the replies on `37 * 23`; each step's components and reward. */
async function play(replies: string[], options: CalculatorOptions = shaped) {
  const env = makeCalculator(options);
  await env.reset({ seed: 0, task: { expression: '37 * 23' } });
  const steps: (Record<string, number | boolean | undefined> & { reward: number })[] = [];
  for (const reply of replies) {
    const result = await env.step(smolReply(reply));
    steps.push({ ...result.info.rewardComponents, reward: result.reward, success: result.info.success });
  }
  return steps;
}

test('call_format: a well-formed calculator call in SmolLM2 format, paid once, even when its expression fails', async () => {
  const [first, second] = await play([smolCall('{"expression": "37 x 23"}'), smolCall('{"expression": "1 + 1"}')]);
  assert.equal(first?.call_format, 1);
  assert.equal(first?.call_operands, 0);
  assert.equal(second?.call_format, 0, 'the second call is not paid again');
});

test('call_format near misses: a wrong argument name, an unknown tool, an unclosed block, prose', async () => {
  for (const reply of [
    smolCall('{"expr": "37 * 23"}'),
    '<tool_call>[{"name": "calc", "arguments": {"expression": "37 * 23"}}]</tool_call>',
    '<tool_call>[{"name": "calculator", "arguments": {"expression": "37 * 23"}}',
    'Let me use the calculator: 37 * 23 = 851',
  ]) {
    const [step] = await play([reply]);
    assert.equal(step?.call_format, 0, reply);
  }
});

test('call_operands: the question operands and operator in any order and spelling; near misses do not fire', async () => {
  for (const expression of ['37 * 23', '23*37', '37 × 23', '(37) * (23)']) {
    const [step] = await play([smolCall(JSON.stringify({ expression }))]);
    assert.deepEqual([step?.call_format, step?.call_operands, step?.tool_call], [1, 1, 1], expression);
  }
  for (const expression of ['37 * 24', '37 + 23', '37 * 23 * 1', '37']) {
    const [step] = await play([smolCall(JSON.stringify({ expression }))]);
    assert.deepEqual([step?.call_format, step?.call_operands], [1, 0], expression);
  }
  // The answer itself evaluates to the answer (tool_call) but is not the question's operation.
  const [bare] = await play([smolCall('{"expression": "851"}')]);
  assert.deepEqual([bare?.call_operands, bare?.tool_call], [0, 1]);
});

test('solved: a right call, then the right number; near misses (no call, wrong number) score 0', async () => {
  const right = await play([smolCall('{"expression": "37 * 23"}'), '37 * 23 = 851.']);
  assert.deepEqual(
    right.map((step) => [step.solved, step.reward, step.success]),
    [
      [0, 0.5, undefined],
      [1, 1, true],
    ],
  );
  const [headOnly] = await play(['37 * 23 = 851']);
  assert.deepEqual([headOnly?.solved, headOnly?.reward, headOnly?.success], [0, 0, false]);
  const wrong = await play([smolCall('{"expression": "37 * 23"}'), 'The answer is 850.']);
  assert.deepEqual([wrong[1]?.solved, wrong[1]?.success], [0, false]);
});

test('the shaping weights default to 0: the components are scored, only solved pays', async () => {
  const env = makeCalculator({ requireToolCall: true, answerFormat: 'last-integer' });
  assert.deepEqual(env.rewardComponents.weights, {
    solved: 1,
    call_format: 0,
    call_operands: 0,
    tool_call: 0,
    invalid_action: -0,
  });
  assert.deepEqual(env.rewardComponents.kinds, {
    solved: 'outcome',
    call_format: 'format',
    call_operands: 'shaping',
    tool_call: 'shaping',
    invalid_action: 'penalty',
  });
  const [call] = await play([smolCall('{"expression": "37 * 23"}')], {
    requireToolCall: true,
    answerFormat: 'last-integer',
  });
  assert.deepEqual([call?.call_format, call?.call_operands, call?.reward], [1, 1, 0]);
});
