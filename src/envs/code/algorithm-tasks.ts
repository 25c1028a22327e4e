/** Code tasks 37–57 (two-sum … digital-root): short algorithms and checks — search, merging, factoring, ciphers, bracket matching. */
import type { CodeTask } from './code-task.ts';

export const algorithmTasks: readonly CodeTask[] = [
  {
    id: 'two-sum',
    signature: 'twoSum(xs, target)',
    spec: 'indices [i, j], i < j, of the first pair summing to target (scan i then j), or null.',
    tests: [
      [
        [[2, 7, 11, 15], 9],
        [0, 1],
      ],
      [
        [[3, 2, 4], 6],
        [1, 2],
      ],
      [[[1, 2], 7], null],
    ],
    solution:
      'function twoSum(xs, target) { for (let i = 0; i < xs.length; i++) for (let j = i + 1; j < xs.length; j++) if (xs[i] + xs[j] === target) return [i, j]; return null; }',
  },
  {
    id: 'balanced',
    signature: 'isBalanced(s)',
    spec: 'true when the brackets ()[]{} in s are balanced and properly nested.',
    tests: [
      [['([]{})'], true],
      [['(]'], false],
      [['(('], false],
      [['a(b)c'], true],
      [[''], true],
    ],
    solution:
      "function isBalanced(s) { const st = []; const m = { ')': '(', ']': '[', '}': '{' }; for (const c of s) { if ('([{'.includes(c)) st.push(c); else if (c in m && st.pop() !== m[c]) return false; } return st.length === 0; }",
  },
  {
    id: 'compress',
    signature: 'compress(s)',
    spec: "run-length encoding: 'aaabcc' → 'a3b1c2'.",
    tests: [
      [['aaabcc'], 'a3b1c2'],
      [[''], ''],
      [['x'], 'x1'],
      [['abab'], 'a1b1a1b1'],
    ],
    solution:
      "function compress(s) { let out = ''; for (let i = 0; i < s.length; ) { let j = i; while (s[j] === s[i]) j++; out += s[i] + (j - i); i = j; } return out; }",
  },
  {
    id: 'digits-reverse',
    signature: 'reverseNumber(n)',
    spec: 'the integer with its digits reversed, keeping the sign (120 → 21).',
    tests: [
      [[123], 321],
      [[-45], -54],
      [[120], 21],
      [[0], 0],
    ],
    solution:
      "function reverseNumber(n) { const r = Number(String(Math.abs(n)).split('').reverse().join('')); return n < 0 ? -r : r; }",
  },
  {
    id: 'power-of-two',
    signature: 'isPowerOfTwo(n)',
    spec: 'true when the integer n is a power of two (1, 2, 4, ...).',
    tests: [
      [[1], true],
      [[16], true],
      [[18], false],
      [[0], false],
      [[-4], false],
    ],
    solution: 'function isPowerOfTwo(n) { return n > 0 && (n & (n - 1)) === 0; }',
  },
  {
    id: 'leap-year',
    signature: 'isLeapYear(y)',
    spec: 'Gregorian leap year test.',
    tests: [
      [[2000], true],
      [[1900], false],
      [[2024], true],
      [[2023], false],
    ],
    solution: 'function isLeapYear(y) { return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0; }',
  },
  {
    id: 'celsius',
    signature: 'toFahrenheit(c)',
    spec: 'degrees Celsius to Fahrenheit.',
    tests: [
      [[0], 32],
      [[100], 212],
      [[-40], -40],
      [[37], 98.6],
    ],
    solution: 'function toFahrenheit(c) { return Math.round((c * 9 / 5 + 32) * 1e10) / 1e10; }',
  },
  {
    id: 'count-occurrences',
    signature: 'countOccurrences(s, sub)',
    spec: 'non-overlapping occurrences of a non-empty substring.',
    tests: [
      [['banana', 'an'], 2],
      [['aaaa', 'aa'], 2],
      [['abc', 'd'], 0],
    ],
    solution: 'function countOccurrences(s, sub) { return s.split(sub).length - 1; }',
  },
  {
    id: 'truncate',
    signature: 'truncate(s, n)',
    spec: "s cut to n characters with '...' appended when it was longer.",
    tests: [
      [['hello world', 5], 'hello...'],
      [['hi', 5], 'hi'],
      [['exact', 5], 'exact'],
    ],
    solution: "function truncate(s, n) { return s.length > n ? s.slice(0, n) + '...' : s; }",
  },
  {
    id: 'pad-left',
    signature: 'padLeft(s, n, ch)',
    spec: 's padded on the left with ch up to length n.',
    tests: [
      [['7', 3, '0'], '007'],
      [['abc', 2, '-'], 'abc'],
      [['', 2, '*'], '**'],
    ],
    solution: 'function padLeft(s, n, ch) { return s.padStart(n, ch); }',
  },
  {
    id: 'matrix-transpose',
    signature: 'transpose(m)',
    spec: 'transpose of a rectangular matrix (array of rows).',
    tests: [
      [
        [
          [
            [1, 2],
            [3, 4],
          ],
        ],
        [
          [1, 3],
          [2, 4],
        ],
      ],
      [[[[1, 2, 3]]], [[1], [2], [3]]],
      [[[]], []],
    ],
    solution: 'function transpose(m) { return m.length ? m[0].map((_, j) => m.map((row) => row[j])) : []; }',
  },
  {
    id: 'dot-product',
    signature: 'dot(a, b)',
    spec: 'dot product of two equal-length number arrays.',
    tests: [
      [
        [
          [1, 2, 3],
          [4, 5, 6],
        ],
        32,
      ],
      [[[], []], 0],
      [[[-1], [1]], -1],
    ],
    solution: 'function dot(a, b) { return a.reduce((s, x, i) => s + x * b[i], 0); }',
  },
  {
    id: 'binary-search',
    signature: 'binarySearch(xs, x)',
    spec: 'index of x in a sorted array, or -1.',
    tests: [
      [[[1, 3, 5, 7], 5], 2],
      [[[1, 3, 5, 7], 4], -1],
      [[[], 1], -1],
      [[[2], 2], 0],
    ],
    solution:
      'function binarySearch(xs, x) { let lo = 0, hi = xs.length - 1; while (lo <= hi) { const m = (lo + hi) >> 1; if (xs[m] === x) return m; if (xs[m] < x) lo = m + 1; else hi = m - 1; } return -1; }',
  },
  {
    id: 'sort-by-key',
    signature: 'sortBy(items, key)',
    spec: 'a copy of an array of objects sorted ascending by items[i][key] (stable).',
    tests: [
      [
        [[{ n: 3 }, { n: 1 }, { n: 2 }], 'n'],
        [{ n: 1 }, { n: 2 }, { n: 3 }],
      ],
      [[[], 'n'], []],
      [
        [[{ a: 'b' }, { a: 'a' }], 'a'],
        [{ a: 'a' }, { a: 'b' }],
      ],
    ],
    solution:
      'function sortBy(items, key) { return [...items].sort((x, y) => (x[key] < y[key] ? -1 : x[key] > y[key] ? 1 : 0)); }',
  },
  {
    id: 'merge-sorted',
    signature: 'mergeSorted(a, b)',
    spec: 'merges two ascending arrays into one ascending array.',
    tests: [
      [
        [
          [1, 4, 9],
          [2, 3, 10],
        ],
        [1, 2, 3, 4, 9, 10],
      ],
      [[[], [1]], [1]],
      [
        [[1, 1], [1]],
        [1, 1, 1],
      ],
    ],
    solution:
      'function mergeSorted(a, b) { const out = []; let i = 0, j = 0; while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i] <= b[j]) ? a[i++] : b[j++]); return out; }',
  },
  {
    id: 'prime-factors',
    signature: 'primeFactors(n)',
    spec: 'prime factors of an integer n >= 2 in ascending order, with repeats.',
    tests: [
      [[12], [2, 2, 3]],
      [[13], [13]],
      [[360], [2, 2, 2, 3, 3, 5]],
    ],
    solution:
      'function primeFactors(n) { const out = []; for (let d = 2; d * d <= n; d++) while (n % d === 0) { out.push(d); n /= d; } if (n > 1) out.push(n); return out; }',
  },
  {
    id: 'word-lengths',
    signature: 'longestWord(s)',
    spec: 'the first longest space-separated word.',
    tests: [
      [['a quick brown fox'], 'quick'],
      [['one'], 'one'],
      [['ab cd'], 'ab'],
    ],
    solution:
      "function longestWord(s) { return s.split(' ').reduce((best, w) => (w.length > best.length ? w : best), ''); }",
  },
  {
    id: 'caesar',
    signature: 'caesar(s, k)',
    spec: 'shifts lower-case letters forward by k (wrapping z → a); other characters unchanged.',
    tests: [
      [['abc', 1], 'bcd'],
      [['xyz', 3], 'abc'],
      [['hi there!', 13], 'uv gurer!'],
    ],
    solution:
      'function caesar(s, k) { return s.replace(/[a-z]/g, (c) => String.fromCharCode(((c.charCodeAt(0) - 97 + k) % 26) + 97)); }',
  },
  {
    id: 'cumulative-sum',
    signature: 'cumulativeSum(xs)',
    spec: 'running totals of an array.',
    tests: [
      [[[1, 2, 3]], [1, 3, 6]],
      [[[]], []],
      [[[5, -5]], [5, 0]],
    ],
    solution: 'function cumulativeSum(xs) { let s = 0; return xs.map((x) => (s += x)); }',
  },
  {
    id: 'triangle',
    signature: 'triangleType(a, b, c)',
    spec: "'equilateral', 'isosceles', 'scalene' or 'invalid' (triangle inequality fails).",
    tests: [
      [[2, 2, 2], 'equilateral'],
      [[2, 2, 3], 'isosceles'],
      [[3, 4, 5], 'scalene'],
      [[1, 2, 3], 'invalid'],
    ],
    solution:
      "function triangleType(a, b, c) { const [x, y, z] = [a, b, c].sort((p, q) => p - q); if (x + y <= z) return 'invalid'; if (a === b && b === c) return 'equilateral'; return a === b || b === c || a === c ? 'isosceles' : 'scalene'; }",
  },
  {
    id: 'digital-root',
    signature: 'digitalRoot(n)',
    spec: 'repeatedly sums the digits of a non-negative integer until one digit is left.',
    tests: [
      [[16], 7],
      [[942], 6],
      [[0], 0],
      [[493193], 2],
    ],
    solution:
      'function digitalRoot(n) { while (n > 9) n = String(n).split("").reduce((s, d) => s + Number(d), 0); return n; }',
  },
];
