/**
 * The calculator task variants bench/real/probe.ts measures SmolLM2-135M-Instruct on: arithmetic
 * size, the system text (plain, or with a one-shot example of the call in the model's own format:
 * a prompt, not a demonstration dataset), the question's wording and the sampling settings.
 */
import type { ChatFormat } from '../../src/chat/chat-format.ts';
import { earlierTurnsText } from '../../src/chat/earlier-turns.ts';
import type { Message } from '../../src/core/types.ts';
import type { CalculatorOptions } from '../../src/envs/calculator/env.ts';

export interface ProbeVariant {
  name: string;
  env: CalculatorOptions;
  sampling: { temperature: number; top_p: number; max_new_tokens: number };
}

/** The env options every variant shares: the model's conventions (see src/envs/calculator/env.ts). */
export const chatConventions = {
  answerFormat: 'last-integer',
  requireToolCall: true,
  toolResultTag: false,
  maxTurns: 3,
} as const;

/** The task sizes probed (the `task` part of a variant's name). */
export const probeTasks: Record<string, CalculatorOptions> = {
  mul2x2: { numOperands: 2, minOperand: 10, maxOperand: 99, operators: ['*'] },
  mix3: { numOperands: 3, minOperand: 2, maxOperand: 20 },
  add2x3: { numOperands: 2, minOperand: 100, maxOperand: 999, operators: ['+', '-'] },
  // tool optional: the right number scores, with or without a call
  freeadd1: { numOperands: 2, minOperand: 1, maxOperand: 9, operators: ['+'], requireToolCall: false },
  freeadd2: { numOperands: 2, minOperand: 10, maxOperand: 99, operators: ['+'], requireToolCall: false },
  freemul1: { numOperands: 2, minOperand: 2, maxOperand: 9, operators: ['*'], requireToolCall: false },
  freemul12: { numOperands: 2, minOperand: 2, maxOperand: 19, operators: ['*'], requireToolCall: false },
  freeadd19: { numOperands: 2, minOperand: 2, maxOperand: 19, operators: ['+'], requireToolCall: false },
  freemix9: { numOperands: 2, minOperand: 2, maxOperand: 9, requireToolCall: false },
};

/** System texts; `example` shows one call in the model's own tool-call format. */
export function systemTexts(format: ChatFormat): Record<string, string> {
  const call = format.assistantText({
    content: '',
    toolCalls: [{ id: 'example', name: 'calculator', arguments: { expression: '12 * 34' } }],
  });
  return {
    brief: 'You are a helpful assistant with a calculator tool. Reply with the number only.',
    plain:
      'You are a helpful assistant. Use the calculator tool to compute the expression, then reply with the result.',
    example:
      'You are a helpful assistant with a calculator tool. To compute an expression, call the tool first, ' +
      `for example: ${call}\nWhen the tool returns the result, reply with that number.`,
    smol:
      'You are an expert in composing functions. You are given a question and a set of possible functions. ' +
      'Based on the question, you will need to make one or more function/tool calls to achieve the purpose. ' +
      `For example, for "What is 12 * 34?" you call ${call}, and when the tool returns 408 you reply "12 * 34 = 408".`,
    transcript:
      'You are a helpful assistant with a calculator tool. You never compute in your head: you call the tool, then answer with its result.\n' +
      `Example:\nuser: What is 12 * 34?\nassistant: ${call}\ntool: 408\nassistant: 12 * 34 = 408`,
  };
}

const exampleCall = (id: string, expression: string) => ({ id, name: 'calculator', arguments: { expression } });

/** A solved exchange: the user asks, the assistant calls the calculator, the tool answers, the assistant replies. */
const solvedExample: Message[] = [
  { role: 'user', content: 'What is 12 * 34?' },
  { role: 'assistant', content: '', toolCalls: [exampleCall('example', '12 * 34')] },
  { role: 'tool', content: '408', toolCallId: 'example', name: 'calculator' },
  { role: 'assistant', content: '12 * 34 = 408' },
];

/** Two questions, each answered by a call alone (the shape of a function-calling model's training pairs). */
const callExamples: Message[] = [
  { role: 'user', content: 'What is 12 * 34?' },
  { role: 'assistant', content: '', toolCalls: [exampleCall('example_1', '12 * 34')] },
  { role: 'user', content: 'What is 56 * 78?' },
  { role: 'assistant', content: '', toolCalls: [exampleCall('example_2', '56 * 78')] },
];

/** Two solved exchanges (call, the tool's result, the reply with that number), one after the other. */
const solvedExamples: Message[] = [
  { role: 'user', content: 'What is 12 * 34?' },
  { role: 'assistant', content: '', toolCalls: [exampleCall('example_1', '12 * 34')] },
  { role: 'tool', content: '408', toolCallId: 'example_1', name: 'calculator' },
  { role: 'assistant', content: '408' },
  { role: 'user', content: 'What is 56 * 78?' },
  { role: 'assistant', content: '', toolCalls: [exampleCall('example_2', '56 * 78')] },
  { role: 'tool', content: '4368', toolCallId: 'example_2', name: 'calculator' },
  { role: 'assistant', content: '4368' },
];

/** Question texts; `hint` repeats the call's shape (with the example's expression) after the question; `oneshot` puts a solved exchange before it, `callshot` two questions answered by calls (`callone`: one), `twoshot` two solved exchanges. */
export function questionTexts(format: ChatFormat): Record<string, string> {
  const call = format.assistantText({
    content: '',
    toolCalls: [{ id: 'example', name: 'calculator', arguments: { expression: '12 * 34' } }],
  });
  return {
    oneshot: earlierTurnsText(format, solvedExample, 'What is {expression}?'),
    oneshotuse: earlierTurnsText(format, solvedExample, 'Use the calculator tool to compute {expression}.'),
    callshot: earlierTurnsText(format, callExamples, 'What is {expression}?'),
    twoshot: earlierTurnsText(format, solvedExamples, 'What is {expression}?'),
    callone: earlierTurnsText(format, callExamples.slice(0, 2), 'What is {expression}?'),
    bare: '{expression}',
    what: 'What is {expression}?',
    short: 'What is {expression}? Reply with just the number.',
    use: 'Use the calculator tool to compute {expression}.',
    hint: `What is {expression}? Call the calculator tool the way you would for 12 * 34: ${call}`,
    call: `What is {expression}? Call the calculator tool: ${call.replace('12 * 34', '{expression}')}`,
  };
}
const samplings = {
  t1: { temperature: 1, top_p: 1, max_new_tokens: 48 },
  t07: { temperature: 0.7, top_p: 0.95, max_new_tokens: 48 },
  t03: { temperature: 0.3, top_p: 1, max_new_tokens: 48 },
  greedy: { temperature: 0, top_p: 1, max_new_tokens: 48 },
};

export function probeVariants(format: ChatFormat): ProbeVariant[] {
  const variants: ProbeVariant[] = [];
  for (const [taskName, task] of Object.entries(probeTasks)) {
    for (const [systemName, instructions] of Object.entries(systemTexts(format))) {
      for (const [questionName, question] of Object.entries(questionTexts(format))) {
        for (const [samplingName, sampling] of Object.entries(samplings)) {
          variants.push({
            name: `${taskName}/${systemName}/${questionName}/${samplingName}`,
            env: { ...chatConventions, ...task, instructions, question },
            sampling,
          });
        }
      }
    }
  }
  return variants;
}
