/**
 * Countdown (TinyZero): reach a target from given numbers with + - * / and parentheses, each
 * number used at most once. `generateCountdown` builds a task from a random expression over a
 * subset of the numbers (so it is solvable, with exact integer steps); `solveCountdown` finds an
 * equation by combining pairs (exhaustive for ≤ 5 numbers); `checkEquation` verifies both rules.
 */
import type { Rng } from '../../core/index.ts';
import { at } from '../../core/indexing.ts';
import { TaskGenerationError } from '../errors.ts';
import { equals, evaluateRational, type Rational, rational } from '../math/rational.ts';

export interface CountdownTask {
  numbers: number[];
  target: number;
}

export interface CountdownOptions {
  numCount: number;
  maxNumber: number;
  maxTarget: number;
}

interface Term {
  value: number;
  text: string;
}

/** A solvable task: numbers in [1, maxNumber], target in [1, maxTarget]. */
export function generateCountdown(rng: Rng, options: CountdownOptions): CountdownTask {
  const attempts = 200;
  for (let attempt = 0; attempt < attempts; attempt++) {
    const numbers = Array.from({ length: options.numCount }, () => rng.range(1, options.maxNumber));
    let terms: Term[] = rng
      .shuffle(numbers.map((value) => ({ value, text: String(value) })))
      .slice(0, rng.range(2, options.numCount));
    while (terms.length > 1) {
      const a = terms.pop();
      const b = terms.pop();
      if (a === undefined || b === undefined) break;
      const combined = combine(a, b).filter((term) => term.value > 0);
      terms.push(combined.length === 0 ? a : rng.pick(combined));
      terms = rng.shuffle(terms);
    }
    const target = at(terms, 0, 'terms').value;
    if (target >= 1 && target <= options.maxTarget && !numbers.includes(target)) return { numbers, target };
  }
  throw new TaskGenerationError('countdown', attempts, options);
}

/** The exact integer results of combining two terms (division only when exact). */
function combine(a: Term, b: Term): Term[] {
  const out: Term[] = [
    { value: a.value + b.value, text: `(${a.text} + ${b.text})` },
    { value: a.value * b.value, text: `${wrap(a)} * ${wrap(b)}` },
    { value: a.value - b.value, text: `(${a.text} - ${b.text})` },
    { value: b.value - a.value, text: `(${b.text} - ${a.text})` },
  ];
  if (b.value !== 0 && a.value % b.value === 0) out.push({ value: a.value / b.value, text: `${wrap(a)} / ${wrap(b)}` });
  if (a.value !== 0 && b.value % a.value === 0) out.push({ value: b.value / a.value, text: `${wrap(b)} / ${wrap(a)}` });
  return out;
}

const wrap = (term: Term): string =>
  /^\d+$/.test(term.text) || term.text.startsWith('(') ? term.text : `(${term.text})`;

/** An equation reaching the target, or null when there is none. */
export function solveCountdown(task: CountdownTask): string | null {
  const seen = new Set<string>();
  const search = (terms: Term[]): string | null => {
    for (const term of terms) if (term.value === task.target) return stripOuter(term.text);
    const key = terms
      .map((term) => term.value)
      .sort((x, y) => x - y)
      .join(',');
    if (seen.has(key) || terms.length < 2) return null;
    seen.add(key);
    for (let i = 0; i < terms.length; i++) {
      for (let j = i + 1; j < terms.length; j++) {
        const rest = terms.filter((_, k) => k !== i && k !== j);
        for (const combined of combine(at(terms, i, 'terms'), at(terms, j, 'terms'))) {
          const found = search([...rest, combined]);
          if (found !== null) return found;
        }
      }
    }
    return null;
  };
  return search(task.numbers.map((value) => ({ value, text: String(value) })));
}

const stripOuter = (text: string): string => (text.startsWith('(') && balancedInside(text) ? text.slice(1, -1) : text);
function balancedInside(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length - 1; i++) {
    depth += text[i] === '(' ? 1 : text[i] === ')' ? -1 : 0;
    if (depth === 0) return false;
  }
  return text.endsWith(')');
}

export type EquationCheck =
  | { kind: 'correct' }
  | { kind: 'wrong'; reason: string }
  | { kind: 'unreadable'; reason: string };

/** Checks an equation (`(25 - 5) * 3` or `(25 - 5) * 3 = 60`) against the task. */
export function checkEquation(equation: string, task: CountdownTask): EquationCheck {
  const sides = equation.split('=');
  if (sides.length > 2) return { kind: 'unreadable', reason: 'more than one "="' };
  const [left = '', right] = sides;
  if (right !== undefined && right.trim() !== String(task.target))
    return { kind: 'wrong', reason: `the right side must be ${task.target}` };
  if (/\d\.\d/.test(left)) return { kind: 'unreadable', reason: 'use the given integers only' };
  let value: Rational;
  try {
    value = evaluateRational(left);
  } catch (error) {
    return { kind: 'unreadable', reason: error instanceof Error ? error.message : String(error) };
  }
  const available = [...task.numbers];
  for (const used of (left.match(/\d+/g) ?? []).map(Number)) {
    const index = available.indexOf(used);
    if (index < 0)
      return { kind: 'wrong', reason: `${used} is not available (numbers: ${task.numbers.join(', ')}, each once)` };
    available.splice(index, 1);
  }
  if (!equals(value, rational(task.target)))
    return { kind: 'wrong', reason: `the equation does not equal ${task.target}` };
  return { kind: 'correct' };
}
