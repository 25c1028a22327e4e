/** Code tasks 18–36 (sum-array … second-largest): statistics, word counts, case and base conversions, small array reshapes. */
import type { CodeTask } from './code-task.ts';

export const everydayTasks: readonly CodeTask[] = [
  {
    id: 'sum-array',
    signature: 'sumArray(xs)',
    spec: 'sum of an array of numbers (0 for empty).',
    tests: [
      [[[1, 2, 3]], 6],
      [[[]], 0],
      [[[-1, 1]], 0],
      [[[10]], 10],
    ],
    solution: 'function sumArray(xs) { return xs.reduce((a, b) => a + b, 0); }',
  },
  {
    id: 'average',
    signature: 'average(xs)',
    spec: 'arithmetic mean of a non-empty array.',
    tests: [
      [[[1, 2, 3]], 2],
      [[[5]], 5],
      [[[1, 2]], 1.5],
      [[[-3, 3]], 0],
    ],
    solution: 'function average(xs) { return xs.reduce((a, b) => a + b, 0) / xs.length; }',
  },
  {
    id: 'median',
    signature: 'median(xs)',
    spec: 'median of a non-empty array (mean of the middle two when even).',
    tests: [
      [[[3, 1, 2]], 2],
      [[[4, 1, 3, 2]], 2.5],
      [[[7]], 7],
      [[[5, 5, 1]], 5],
    ],
    solution:
      'function median(xs) { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; }',
  },
  {
    id: 'count-words',
    signature: 'countWords(s)',
    spec: 'number of words (runs of non-space characters).',
    tests: [
      [['hello world'], 2],
      [['  spaced   out  '], 2],
      [[''], 0],
      [['one'], 1],
    ],
    solution: 'function countWords(s) { return s.split(/\\s+/).filter(Boolean).length; }',
  },
  {
    id: 'char-frequency',
    signature: 'charFrequency(s)',
    spec: 'an object mapping each character to its count, keys in first-seen order.',
    tests: [
      [['aab'], { a: 2, b: 1 }],
      [[''], {}],
      [['abca'], { a: 2, b: 1, c: 1 }],
    ],
    solution:
      'function charFrequency(s) { const out = {}; for (const c of s) out[c] = (out[c] || 0) + 1; return out; }',
  },
  {
    id: 'is-anagram',
    signature: 'isAnagram(a, b)',
    spec: 'true when a and b use the same letters the same number of times (case-insensitive).',
    tests: [
      [['listen', 'silent'], true],
      [['Dusty', 'study'], true],
      [['abc', 'abd'], false],
      [['aa', 'a'], false],
    ],
    solution:
      "function isAnagram(a, b) { const k = (s) => s.toLowerCase().split('').sort().join(''); return k(a) === k(b); }",
  },
  {
    id: 'title-to-snake',
    signature: 'toSnakeCase(s)',
    spec: "converts camelCase to snake_case ('helloWorld' → 'hello_world').",
    tests: [
      [['helloWorld'], 'hello_world'],
      [['a'], 'a'],
      [['parseHttpRequest'], 'parse_http_request'],
    ],
    solution: "function toSnakeCase(s) { return s.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase()); }",
  },
  {
    id: 'snake-to-camel',
    signature: 'toCamelCase(s)',
    spec: "converts snake_case to camelCase ('hello_world' → 'helloWorld').",
    tests: [
      [['hello_world'], 'helloWorld'],
      [['a'], 'a'],
      [['parse_http_request'], 'parseHttpRequest'],
    ],
    solution: 'function toCamelCase(s) { return s.replace(/_([a-z])/g, (_, c) => c.toUpperCase()); }',
  },
  {
    id: 'binary',
    signature: 'toBinary(n)',
    spec: 'binary string of a non-negative integer.',
    tests: [
      [[0], '0'],
      [[5], '101'],
      [[255], '11111111'],
      [[8], '1000'],
    ],
    solution: 'function toBinary(n) { return n.toString(2); }',
  },
  {
    id: 'from-binary',
    signature: 'fromBinary(s)',
    spec: 'the integer a binary string denotes.',
    tests: [
      [['0'], 0],
      [['101'], 5],
      [['11111111'], 255],
    ],
    solution: 'function fromBinary(s) { return parseInt(s, 2); }',
  },
  {
    id: 'roman',
    signature: 'toRoman(n)',
    spec: 'Roman numeral of 1 <= n <= 3999.',
    tests: [
      [[4], 'IV'],
      [[9], 'IX'],
      [[14], 'XIV'],
      [[1994], 'MCMXCIV'],
      [[3999], 'MMMCMXCIX'],
    ],
    solution:
      "function toRoman(n) { const t = [[1000,'M'],[900,'CM'],[500,'D'],[400,'CD'],[100,'C'],[90,'XC'],[50,'L'],[40,'XL'],[10,'X'],[9,'IX'],[5,'V'],[4,'IV'],[1,'I']]; let s = ''; for (const [v, r] of t) while (n >= v) { s += r; n -= v; } return s; }",
  },
  {
    id: 'from-roman',
    signature: 'fromRoman(s)',
    spec: 'the integer value of a Roman numeral.',
    tests: [
      [['IV'], 4],
      [['XIV'], 14],
      [['MCMXCIV'], 1994],
      [['III'], 3],
    ],
    solution:
      'function fromRoman(s) { const v = { I: 1, V: 5, X: 10, L: 50, C: 100, D: 500, M: 1000 }; let t = 0; for (let i = 0; i < s.length; i++) { const a = v[s[i]], b = v[s[i + 1]] || 0; t += a < b ? -a : a; } return t; }',
  },
  {
    id: 'rotate',
    signature: 'rotate(xs, k)',
    spec: 'rotates an array right by k places (k may exceed the length).',
    tests: [
      [
        [[1, 2, 3, 4], 1],
        [4, 1, 2, 3],
      ],
      [
        [[1, 2, 3], 3],
        [1, 2, 3],
      ],
      [
        [[1, 2, 3], 4],
        [3, 1, 2],
      ],
      [[[], 2], []],
    ],
    solution:
      'function rotate(xs, k) { if (!xs.length) return []; k %= xs.length; return [...xs.slice(xs.length - k), ...xs.slice(0, xs.length - k)]; }',
  },
  {
    id: 'zip',
    signature: 'zip(a, b)',
    spec: 'pairs [a[i], b[i]] up to the shorter length.',
    tests: [
      [
        [
          [1, 2],
          ['a', 'b'],
        ],
        [
          [1, 'a'],
          [2, 'b'],
        ],
      ],
      [[[1, 2, 3], [4]], [[1, 4]]],
      [[[], [1]], []],
    ],
    solution: 'function zip(a, b) { return a.slice(0, Math.min(a.length, b.length)).map((x, i) => [x, b[i]]); }',
  },
  {
    id: 'group-by-length',
    signature: 'groupByLength(words)',
    spec: 'an object from word length to the words of that length, in input order.',
    tests: [
      [[['a', 'bb', 'c']], { 1: ['a', 'c'], 2: ['bb'] }],
      [[[]], {}],
    ],
    solution:
      'function groupByLength(words) { const out = {}; for (const w of words) (out[w.length] ||= []).push(w); return out; }',
  },
  {
    id: 'pick',
    signature: 'pick(obj, keys)',
    spec: 'a new object with only the given keys that obj has.',
    tests: [
      [[{ a: 1, b: 2, c: 3 }, ['a', 'c']], { a: 1, c: 3 }],
      [[{ a: 1 }, ['z']], {}],
      [[{}, []], {}],
    ],
    solution:
      'function pick(obj, keys) { const out = {}; for (const k of keys) if (k in obj) out[k] = obj[k]; return out; }',
  },
  {
    id: 'invert',
    signature: 'invert(obj)',
    spec: 'swaps keys and values of an object of strings.',
    tests: [
      [[{ a: 'x', b: 'y' }], { x: 'a', y: 'b' }],
      [[{}], {}],
    ],
    solution:
      'function invert(obj) { const out = {}; for (const [k, v] of Object.entries(obj)) out[v] = k; return out; }',
  },
  {
    id: 'clamp',
    signature: 'clamp(x, lo, hi)',
    spec: 'x limited to the range [lo, hi].',
    tests: [
      [[5, 0, 10], 5],
      [[-3, 0, 10], 0],
      [[12, 0, 10], 10],
    ],
    solution: 'function clamp(x, lo, hi) { return Math.min(hi, Math.max(lo, x)); }',
  },
  {
    id: 'second-largest',
    signature: 'secondLargest(xs)',
    spec: 'the second largest distinct value, or null when there is none.',
    tests: [
      [[[1, 3, 2]], 2],
      [[[5, 5, 4]], 4],
      [[[7, 7]], null],
      [[[]], null],
    ],
    solution:
      'function secondLargest(xs) { const s = [...new Set(xs)].sort((a, b) => b - a); return s.length > 1 ? s[1] : null; }',
  },
];
