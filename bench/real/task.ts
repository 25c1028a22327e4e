/**
 * The task bench:real trains on, chosen by measurement (bench/real/probe.sh, table in
 * docs/bench-real.md): the calculator env in the model's own conventions — its tool offered in
 * SmolLM2's format, the answer the reply's last integer — on a sum of two operands from 2 to 19.
 * The tool is optional (`requireToolCall: false`): SmolLM2-135M-Instruct's base success with the
 * tool required was 0% on every variant measured, so pure RL had no signal there. A right call is
 * still paid 0.5 once (`toolCallReward`), on top of the answer's 1. Base success of this variant,
 * PyTorch probe, 32 test seeds: 16% sampled at T=1, 44% greedy.
 */
import type { ChatFormat } from '../../src/chat/chat-format.ts';
import type { CalculatorOptions } from '../../src/envs/calculator/env.ts';
import { chatConventions, questionTexts, systemTexts } from './variants.ts';

export const realTaskName = 'a + b, operands 2–19, tool optional (freeadd19/brief/short + toolCallReward 0.5)';

export function realTaskOptions(format: ChatFormat): CalculatorOptions {
  return {
    numOperands: 2,
    minOperand: 2,
    maxOperand: 19,
    operators: ['+'],
    ...chatConventions,
    requireToolCall: false,
    instructions: systemTexts(format).brief!,
    question: questionTexts(format).short!,
    toolCallReward: 0.5,
  };
}
