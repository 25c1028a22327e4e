/**
 * The task bench:real trains on, chosen by measurement (bench/real/probe.sh, table in
 * docs/bench-real.md): the calculator env in the model's own conventions, with the system text and
 * question wording under which SmolLM2-135M-Instruct's base success is low but not zero.
 */
import type { ChatFormat } from '../../src/chat/chat-format.ts';
import type { CalculatorOptions } from '../../src/envs/calculator/env.ts';
import { chatConventions, questionTexts, systemTexts } from './variants.ts';

export const realTaskName = 'mul2x2/example/call + toolCallReward 0.5';

export function realTaskOptions(format: ChatFormat): CalculatorOptions {
  return {
    numOperands: 2,
    minOperand: 10,
    maxOperand: 99,
    operators: ['*'],
    ...chatConventions,
    instructions: systemTexts(format).example!,
    question: questionTexts(format).call!,
    toolCallReward: 0.5,
  };
}
