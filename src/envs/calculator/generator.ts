/**
 * Random integer arithmetic tasks: a random binary tree of `numOperands` integers in
 * [minOperand, maxOperand] (default 0) joined by + - * (or the `operators` given), printed with parentheses only where precedence needs them
 * (or, with `parentheses: false`, a flat left-to-right chain read with usual precedence).
 * Results are integers by construction (no division). The tree's own value is the answer, so a
 * test can check the printed text against the evaluator. With `smallOperand`, one operand (its
 * position drawn from the seed) comes from that range instead: the operand curriculum's easy
 * stages (calculator-curriculum.ts), e.g. 7 * 43 before 67 * 43.
 */
import type { Rng } from '../../core/index.ts';
import { evaluateExpression } from './evaluate.ts';

export const calculatorOperators = ['+', '-', '*'] as const;
type Operator = (typeof calculatorOperators)[number];

export interface ExpressionGeneratorOptions {
  numOperands: number;
  /** Smallest operand (default 0). */
  minOperand?: number;
  maxOperand: number;
  parentheses: boolean;
  /** The operators drawn from (default all three). */
  operators?: readonly Operator[];
  /** One operand, at a seeded position, drawn from [min, max] instead (default: none). */
  smallOperand?: { min: number; max: number };
}

interface Printed {
  text: string;
  /** Operator at the top of this subtree (null for a number). */
  top: Operator | null;
  value: number;
}

const apply = {
  '+': (a: number, b: number) => a + b,
  '-': (a: number, b: number) => a - b,
  '*': (a: number, b: number) => a * b,
};

export function generateExpression(
  rng: Rng,
  options: ExpressionGeneratorOptions,
): { expression: string; answer: number } {
  const {
    numOperands,
    minOperand = 0,
    maxOperand,
    parentheses,
    operators = calculatorOperators,
    smallOperand,
  } = options;
  // Drawn only with smallOperand, so the expressions of every other setting stay as they were.
  const smallAt = smallOperand === undefined ? -1 : rng.range(0, numOperands - 1);
  let drawn = 0;
  const operand = (): Printed => {
    const small = smallOperand !== undefined && drawn++ === smallAt;
    const value = small ? rng.range(smallOperand.min, smallOperand.max) : rng.range(minOperand, maxOperand);
    return { text: String(value), top: null, value };
  };
  if (parentheses) {
    const build = (count: number): Printed => {
      if (count === 1) return operand();
      const leftCount = rng.range(1, count - 1);
      const left = build(leftCount);
      const right = build(count - leftCount);
      const operator = rng.pick(operators);
      const wrapLeft = operator === '*' && (left.top === '+' || left.top === '-');
      const wrapRight = (operator === '*' || operator === '-') && (right.top === '+' || right.top === '-');
      const side = (part: Printed, wrap: boolean): string => (wrap ? `(${part.text})` : part.text);
      return {
        text: `${side(left, wrapLeft)} ${operator} ${side(right, wrapRight)}`,
        top: operator,
        value: apply[operator](left.value, right.value),
      };
    };
    const printed = build(numOperands);
    return { expression: printed.text, answer: printed.value === 0 ? 0 : printed.value }; // no -0
  }
  let text = operand().text;
  for (let i = 1; i < numOperands; i++) text += ` ${rng.pick(operators)} ${operand().text}`;
  return { expression: text, answer: evaluateExpression(text) };
}
