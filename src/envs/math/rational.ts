/**
 * Exact rational arithmetic for the math env: `Rational` (numerator/denominator as safe integers,
 * always reduced, denominator > 0) and a recursive-descent evaluator over
 *
 *   expression = term (("+" | "-") term)*
 *   term       = factor (("*" | "×" | "/" | "÷") factor)*
 *   factor     = ("-" | "+") factor | number | "(" expression ")"      number = 12 | 3.25
 *
 * so `(20 - 5) / 3` is exactly 5 and `7 / 2` exactly 7/2 (no float rounding). No `eval`.
 */
import { CalculatorError } from '../calculator/evaluate.ts';

export interface Rational {
  numerator: number;
  denominator: number;
}

function gcd(a: number, b: number): number {
  a = Math.abs(a);
  b = Math.abs(b);
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

export function rational(numerator: number, denominator = 1): Rational {
  if (denominator === 0) throw new CalculatorError('division by zero', `${numerator}/0`);
  if (!Number.isSafeInteger(numerator) || !Number.isSafeInteger(denominator))
    throw new CalculatorError('number too large', `${numerator}/${denominator}`);
  const divisor = gcd(numerator, denominator) || 1;
  const sign = denominator < 0 ? -1 : 1;
  return { numerator: (sign * numerator) / divisor + 0, denominator: (sign * denominator) / divisor };
}

/** A decimal string ("3.25", "-0.5") as an exact rational. */
export function parseDecimal(text: string): Rational {
  const [whole = '0', fraction = ''] = text.replace(/^[-+]/, '').split('.');
  const scale = 10 ** fraction.length;
  const value = rational(Number(whole + fraction), scale);
  return text.startsWith('-') ? rational(-value.numerator, value.denominator) : value;
}

export const add = (a: Rational, b: Rational) =>
  rational(a.numerator * b.denominator + b.numerator * a.denominator, a.denominator * b.denominator);
export const subtract = (a: Rational, b: Rational) => add(a, rational(-b.numerator, b.denominator));
export const multiply = (a: Rational, b: Rational) =>
  rational(a.numerator * b.numerator, a.denominator * b.denominator);
export const divide = (a: Rational, b: Rational) => rational(a.numerator * b.denominator, a.denominator * b.numerator);
export const equals = (a: Rational, b: Rational) => a.numerator === b.numerator && a.denominator === b.denominator;
export const toNumber = (a: Rational) => a.numerator / a.denominator;

/** "7/2", "-3", "5". */
export function formatRational(value: Rational): string {
  return value.denominator === 1 ? String(value.numerator) : `${value.numerator}/${value.denominator}`;
}

const maxLength = 200;
const maxDepth = 50;
const allowed = 'numbers, + - * / ( )';

/** Evaluates an arithmetic expression exactly; `CalculatorError` says what is wrong. */
export function evaluateRational(expression: string): Rational {
  if (expression.length > maxLength)
    throw new CalculatorError(`expression longer than ${maxLength} characters`, expression);
  const tokens =
    expression
      .replace(/−/g, '-')
      .replace(/×/g, '*')
      .replace(/÷/g, '/')
      .match(/\d+(?:\.\d+)?|\S/g) ?? [];
  let index = 0;
  const fail = (what: string): never => {
    throw new CalculatorError(`${what}; allowed: ${allowed}`, expression);
  };
  function parseExpression(depth: number): Rational {
    let value = parseTerm(depth);
    while (tokens[index] === '+' || tokens[index] === '-') {
      const operator = tokens[index++];
      const right = parseTerm(depth);
      value = operator === '+' ? add(value, right) : subtract(value, right);
    }
    return value;
  }
  function parseTerm(depth: number): Rational {
    let value = parseFactor(depth);
    while (tokens[index] === '*' || tokens[index] === '/') {
      const operator = tokens[index++];
      const right = parseFactor(depth);
      value = operator === '*' ? multiply(value, right) : divide(value, right);
    }
    return value;
  }
  function parseFactor(depth: number): Rational {
    if (depth > maxDepth) throw new CalculatorError('expression nested too deeply', expression);
    const token = tokens[index++];
    if (token === undefined) return fail('unexpected end');
    if (token === '-') {
      const value = parseFactor(depth + 1);
      return rational(-value.numerator, value.denominator);
    }
    if (token === '+') return parseFactor(depth + 1);
    if (/^\d/.test(token)) return parseDecimal(token);
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
  return value;
}
