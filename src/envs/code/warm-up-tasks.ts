/** The first 17 code tasks (add … range): one-step arithmetic, string and array functions. */
import type { CodeTask } from './code-task.ts';

export const warmUpTasks: readonly CodeTask[] = [
  {
    id: 'add',
    signature: 'add(a, b)',
    spec: 'returns the sum of two numbers.',
    tests: [
      [[1, 2], 3],
      [[-4, 4], 0],
      [[10, 25], 35],
      [[0.5, 0.25], 0.75],
    ],
    solution: 'function add(a, b) { return a + b; }',
  },
  {
    id: 'max-of',
    signature: 'maxOf(xs)',
    spec: 'returns the largest number of a non-empty array.',
    tests: [
      [[[3, 9, 2]], 9],
      [[[-5, -2, -9]], -2],
      [[[7]], 7],
      [[[1, 1, 0]], 1],
    ],
    solution: 'function maxOf(xs) { return Math.max(...xs); }',
  },
  {
    id: 'reverse-string',
    signature: 'reverseString(s)',
    spec: 'returns the string reversed.',
    tests: [
      [['abc'], 'cba'],
      [[''], ''],
      [['racecar'], 'racecar'],
      [['ab cd'], 'dc ba'],
    ],
    solution: "function reverseString(s) { return s.split('').reverse().join(''); }",
  },
  {
    id: 'is-palindrome',
    signature: 'isPalindrome(s)',
    spec: 'true when s reads the same backwards, ignoring case and non-letters.',
    tests: [
      [['Racecar'], true],
      [['A man, a plan, a canal: Panama'], true],
      [['hello'], false],
      [[''], true],
    ],
    solution:
      "function isPalindrome(s) { const t = s.toLowerCase().replace(/[^a-z]/g, ''); return t === t.split('').reverse().join(''); }",
  },
  {
    id: 'factorial',
    signature: 'factorial(n)',
    spec: 'returns n! for an integer n >= 0.',
    tests: [
      [[0], 1],
      [[1], 1],
      [[5], 120],
      [[10], 3628800],
    ],
    solution: 'function factorial(n) { let r = 1; for (let i = 2; i <= n; i++) r *= i; return r; }',
  },
  {
    id: 'fibonacci',
    signature: 'fibonacci(n)',
    spec: 'returns the n-th Fibonacci number, fibonacci(0) = 0, fibonacci(1) = 1.',
    tests: [
      [[0], 0],
      [[1], 1],
      [[2], 1],
      [[10], 55],
      [[30], 832040],
    ],
    solution: 'function fibonacci(n) { let a = 0, b = 1; for (let i = 0; i < n; i++) [a, b] = [b, a + b]; return a; }',
  },
  {
    id: 'count-vowels',
    signature: 'countVowels(s)',
    spec: 'counts the vowels a, e, i, o, u (either case) in s.',
    tests: [
      [['hello'], 2],
      [['AEIOU'], 5],
      [['rhythm'], 0],
      [['Programming'], 3],
    ],
    solution: 'function countVowels(s) { return (s.match(/[aeiou]/gi) || []).length; }',
  },
  {
    id: 'sum-digits',
    signature: 'sumDigits(n)',
    spec: 'returns the sum of the decimal digits of the integer n (sign ignored).',
    tests: [
      [[123], 6],
      [[0], 0],
      [[-45], 9],
      [[9999], 36],
    ],
    solution: "function sumDigits(n) { return String(Math.abs(n)).split('').reduce((s, d) => s + Number(d), 0); }",
  },
  {
    id: 'is-prime',
    signature: 'isPrime(n)',
    spec: 'true when the integer n is prime.',
    tests: [
      [[2], true],
      [[1], false],
      [[17], true],
      [[21], false],
      [[97], true],
      [[0], false],
    ],
    solution:
      'function isPrime(n) { if (n < 2) return false; for (let d = 2; d * d <= n; d++) if (n % d === 0) return false; return true; }',
  },
  {
    id: 'gcd',
    signature: 'gcd(a, b)',
    spec: 'greatest common divisor of two non-negative integers.',
    tests: [
      [[12, 18], 6],
      [[7, 5], 1],
      [[0, 9], 9],
      [[100, 75], 25],
    ],
    solution: 'function gcd(a, b) { while (b) [a, b] = [b, a % b]; return a; }',
  },
  {
    id: 'lcm',
    signature: 'lcm(a, b)',
    spec: 'least common multiple of two positive integers.',
    tests: [
      [[4, 6], 12],
      [[3, 7], 21],
      [[5, 5], 5],
      [[12, 18], 36],
    ],
    solution: 'function lcm(a, b) { const g = (x, y) => (y ? g(y, x % y) : x); return (a / g(a, b)) * b; }',
  },
  {
    id: 'fizzbuzz',
    signature: 'fizzBuzz(n)',
    spec: "returns 'Fizz' for multiples of 3, 'Buzz' of 5, 'FizzBuzz' of both, else the number as a string.",
    tests: [
      [[3], 'Fizz'],
      [[5], 'Buzz'],
      [[15], 'FizzBuzz'],
      [[7], '7'],
    ],
    solution:
      "function fizzBuzz(n) { return n % 15 === 0 ? 'FizzBuzz' : n % 3 === 0 ? 'Fizz' : n % 5 === 0 ? 'Buzz' : String(n); }",
  },
  {
    id: 'capitalize-words',
    signature: 'capitalizeWords(s)',
    spec: 'upper-cases the first letter of every space-separated word.',
    tests: [
      [['hello world'], 'Hello World'],
      [['a b c'], 'A B C'],
      [[''], ''],
      [['already Done'], 'Already Done'],
    ],
    solution:
      "function capitalizeWords(s) { return s.split(' ').map((w) => (w ? w[0].toUpperCase() + w.slice(1) : w)).join(' '); }",
  },
  {
    id: 'unique',
    signature: 'unique(xs)',
    spec: 'removes duplicates, keeping the first occurrence order.',
    tests: [
      [[[1, 2, 1, 3, 2]], [1, 2, 3]],
      [[[]], []],
      [[['a', 'a']], ['a']],
      [[[3, 2, 1]], [3, 2, 1]],
    ],
    solution: 'function unique(xs) { return [...new Set(xs)]; }',
  },
  {
    id: 'flatten',
    signature: 'flatten(xs)',
    spec: 'flattens arbitrarily nested arrays into one array.',
    tests: [
      [[[1, [2, [3, [4]]]]], [1, 2, 3, 4]],
      [[[]], []],
      [[[[1], [2], 3]], [1, 2, 3]],
    ],
    solution: 'function flatten(xs) { return xs.flat(Infinity); }',
  },
  {
    id: 'chunk',
    signature: 'chunk(xs, size)',
    spec: 'splits an array into arrays of `size` items (the last may be shorter).',
    tests: [
      [
        [[1, 2, 3, 4, 5], 2],
        [[1, 2], [3, 4], [5]],
      ],
      [[[], 3], []],
      [[[1, 2, 3], 3], [[1, 2, 3]]],
    ],
    solution:
      'function chunk(xs, size) { const out = []; for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size)); return out; }',
  },
  {
    id: 'range',
    signature: 'range(start, end)',
    spec: 'integers from start up to but not including end ([] when end <= start).',
    tests: [
      [
        [0, 4],
        [0, 1, 2, 3],
      ],
      [[3, 3], []],
      [
        [-2, 1],
        [-2, -1, 0],
      ],
      [[5, 2], []],
    ],
    solution:
      'function range(start, end) { const out = []; for (let i = start; i < end; i++) out.push(i); return out; }',
  },
];
