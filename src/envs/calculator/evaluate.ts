/**
 * A safe integer arithmetic evaluator (no `eval`): recursive descent over
 *
 *   expression = term (("+" | "-") term)*
 *   term       = factor (("*" | "×") factor)*
 *   factor     = ("-" | "+") factor | integer | "(" expression ")"
 *
 * `−` (U+2212) reads as `-`. Results must stay safe integers; input is capped in length and depth.
 */
import { AgentRlError } from '../../core/index.ts';

/** The calculator could not evaluate an expression; the message says why (the model sees it). */
export class CalculatorError extends AgentRlError {
  constructor(message: string, expression: string) {
    super('CALCULATOR', message, { expression });
  }
}

const maxLength = 200;
const maxDepth = 50;
const allowed = 'integers, + - * ( )';

export function evaluateExpression(expression: string): number {
  if (expression.length > maxLength)
    throw new CalculatorError(`expression longer than ${maxLength} characters`, expression);
  const tokens =
    expression
      .replace(/−/g, '-')
      .replace(/×/g, '*')
      .match(/\d+|\S/g) ?? [];
  let index = 0;
  const fail = (what: string): never => {
    throw new CalculatorError(`${what}; allowed: ${allowed}`, expression);
  };
  const checked = (value: number): number => {
    if (!Number.isSafeInteger(value)) throw new CalculatorError('result too large', expression);
    return value;
  };

  function parseExpression(depth: number): number {
    let value = parseTerm(depth);
    while (tokens[index] === '+' || tokens[index] === '-') {
      const operator = tokens[index++];
      const right = parseTerm(depth);
      value = checked(operator === '+' ? value + right : value - right);
    }
    return value;
  }
  function parseTerm(depth: number): number {
    let value = parseFactor(depth);
    while (tokens[index] === '*') {
      index++;
      value = checked(value * parseFactor(depth));
    }
    return value;
  }
  function parseFactor(depth: number): number {
    if (depth > maxDepth) throw new CalculatorError('expression nested too deeply', expression);
    const token = tokens[index++];
    if (token === undefined) return fail('unexpected end');
    if (token === '-') return checked(-parseFactor(depth + 1));
    if (token === '+') return parseFactor(depth + 1);
    if (/^\d+$/.test(token)) return checked(Number(token));
    if (token === '(') {
      const value = parseExpression(depth + 1);
      if (tokens[index++] !== ')') fail('missing ")"');
      return value;
    }
    return fail(`unexpected "${token}"`);
  }

  if (tokens.length === 0) fail('empty expression');
  const value = parseExpression(0);
  if (index < tokens.length) fail(`unexpected "${tokens[index]}"`);
  return value === 0 ? 0 : value; // no -0
}
