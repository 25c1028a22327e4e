/**
 * Math problems, a pure function of the seed, in three kinds:
 * - `arithmetic`: a multi-step integer expression (the calculator env's generator), sometimes
 *   divided by a small number, so answers may be fractions;
 * - `linear`: `a·x + b = c·x + d` with a rational solution;
 * - `word`: templated word problems with names, items and units.
 * Each problem carries a `solution` expression whose exact value is the answer (the scripted
 * expert feeds it to the calculator tool), and the answer's unit ('' when none).
 */
import type { Rng } from '../../core/index.ts';
import { generateExpression } from '../calculator/generator.ts';
import { evaluateRational, type Rational } from './rational.ts';

export const mathKinds = ['arithmetic', 'linear', 'word'] as const;
export type MathKind = (typeof mathKinds)[number];

export interface MathProblem {
  kind: MathKind;
  question: string;
  /** An arithmetic expression whose value is the answer. */
  solution: string;
  answer: Rational;
  unit: string;
}

const names = ['Ana', 'Bo', 'Chen', 'Dara', 'Eli', 'Fay', 'Gus', 'Hana'];
const items = ['pencil', 'apple', 'marble', 'stamp', 'card', 'shell'];

type Template = (rng: Rng) => { question: string; solution: string; unit: string };

const templates: Template[] = [
  (rng) => {
    const [name, item, packs, perPack] = [rng.pick(names), rng.pick(items), rng.range(2, 9), rng.range(3, 12)];
    const given = rng.range(1, packs * perPack - 1);
    return {
      question: `${name} buys ${packs} packs of ${perPack} ${item}s and gives away ${given}. How many ${item}s are left?`,
      solution: `${packs} * ${perPack} - ${given}`,
      unit: `${item}s`,
    };
  },
  (rng) => {
    const [speed, hours] = [rng.range(3, 12) * 10, rng.range(2, 9)];
    return {
      question: `A train runs at ${speed} km/h for ${hours} hours. How far does it go, in km?`,
      solution: `${speed} * ${hours}`,
      unit: 'km',
    };
  },
  (rng) => {
    const [name, item, price, count] = [rng.pick(names), rng.pick(items), rng.range(2, 15), rng.range(2, 12)];
    return {
      question: `${name} has $${price * count}. One ${item} costs $${price}. How many ${item}s can ${name} buy?`,
      solution: `${price * count} / ${price}`,
      unit: `${item}s`,
    };
  },
  (rng) => {
    const [cups, cakes, wanted] = [rng.range(2, 7), rng.range(2, 5), rng.range(1, 9)];
    return {
      question: `A recipe uses ${cups} cups of flour for ${cakes} cakes. How many cups for ${wanted} cakes?`,
      solution: `${cups} * ${wanted} / ${cakes}`,
      unit: 'cups',
    };
  },
  (rng) => {
    const [name, wage, hours, weeks] = [rng.pick(names), rng.range(12, 40), rng.range(20, 40), rng.range(4, 52)];
    return {
      question: `${name} earns $${wage} an hour, ${hours} hours a week, for ${weeks} weeks. How many dollars in total?`,
      solution: `${wage} * ${hours} * ${weeks}`,
      unit: 'dollars',
    };
  },
  (rng) => {
    const [length, width] = [rng.range(3, 40), rng.range(3, 40)];
    return {
      question: `A garden is ${length} m long and ${width} m wide. What is its area in square meters?`,
      solution: `${length} * ${width}`,
      unit: 'm²',
    };
  },
];

export function generateMathProblem(
  rng: Rng,
  options: { kinds: readonly MathKind[]; numOperands: number; maxOperand: number },
): MathProblem {
  const kind = rng.pick(options.kinds);
  const problem =
    kind === 'arithmetic'
      ? arithmetic(rng, options)
      : kind === 'linear'
        ? linear(rng, options.maxOperand)
        : rng.pick(templates)(rng);
  return { kind, ...problem, answer: evaluateRational(problem.solution) };
}

function arithmetic(
  rng: Rng,
  options: { numOperands: number; maxOperand: number },
): { question: string; solution: string; unit: string } {
  const { expression } = generateExpression(rng, { ...options, parentheses: true });
  const divisor = rng.next() < 0.4 ? rng.range(2, 6) : 1;
  const solution = divisor === 1 ? expression : `(${expression}) / ${divisor}`;
  return { question: `Compute ${solution}`, solution, unit: '' };
}

function linear(rng: Rng, maxOperand: number): { question: string; solution: string; unit: string } {
  const nonZero = (): number => rng.range(1, 9) * (rng.next() < 0.3 ? -1 : 1);
  const a = nonZero();
  let c = rng.range(-3, 3);
  if (c === a) c = 0;
  const [b, d] = [rng.range(-maxOperand, maxOperand), rng.range(-maxOperand, maxOperand)];
  const side = (coefficient: number, constant: number): string => {
    const term = coefficient === 0 ? '' : `${coefficient === 1 ? '' : coefficient === -1 ? '-' : coefficient}x`;
    if (term === '') return String(constant);
    return constant === 0 ? term : `${term} ${constant < 0 ? '-' : '+'} ${Math.abs(constant)}`;
  };
  return {
    question: `Solve for x: ${side(a, b)} = ${side(c, d)}`,
    solution: `(${d} - ${b}) / (${a} - ${c})`,
    unit: '',
  };
}
