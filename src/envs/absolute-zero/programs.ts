/**
 * Reference programs for the Absolute Zero env: small deterministic functions `f` with a kind of
 * input. The proposer is shown one as an example; the scripted expert proposes them with fresh
 * inputs.
 */
import type { Rng } from '../../core/index.ts';

export type InputKind = 'int' | 'word' | 'ints' | 'sentence';

export interface ReferenceProgram {
  program: string;
  input: InputKind;
}

export const referencePrograms: readonly ReferenceProgram[] = [
  { program: 'function f(x) { return x * 3 + 1; }', input: 'int' },
  { program: 'function f(x) { return x % 7; }', input: 'int' },
  { program: 'function f(n) { let t = 0; for (let i = 1; i <= n; i++) t += i; return t; }', input: 'int' },
  { program: 'function f(n) { return n.toString(2); }', input: 'int' },
  { program: "function f(s) { return s.split('').reverse().join(''); }", input: 'word' },
  { program: 'function f(s) { return s.toUpperCase() + s.length; }', input: 'word' },
  { program: "function f(s) { return [...s].filter((c) => 'aeiou'.includes(c)).length; }", input: 'word' },
  { program: 'function f(xs) { return xs.filter((v) => v % 2 === 0).length; }', input: 'ints' },
  { program: 'function f(xs) { return Math.max(...xs) - Math.min(...xs); }', input: 'ints' },
  { program: 'function f(xs) { return xs.map((v) => v * v); }', input: 'ints' },
  { program: 'function f(xs) { return [...xs].sort((a, b) => a - b)[0]; }', input: 'ints' },
  { program: "function f(s) { return s.split(' ').length; }", input: 'sentence' },
];

const words = ['apple', 'river', 'stone', 'cloud', 'ember', 'lotus', 'pixel', 'quartz'];

export function randomInput(kind: InputKind, rng: Rng): unknown {
  if (kind === 'int') return rng.range(0, 30);
  if (kind === 'word') return rng.pick(words);
  if (kind === 'ints') return Array.from({ length: rng.range(2, 5) }, () => rng.range(-9, 20));
  return Array.from({ length: rng.range(2, 5) }, () => rng.pick(words)).join(' ');
}
