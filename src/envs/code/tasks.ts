/**
 * The code env's shipped tasks, written for agentrl: a one-line spec, the function's signature,
 * unit tests (arguments → expected JSON value) and a reference solution (the expert's answer; a
 * test checks that every reference passes every test in the sandbox).
 */
export interface CodeTask {
  id: string;
  /** `name(a, b)`: the function to write. */
  signature: string;
  spec: string;
  tests: Array<[args: unknown[], expected: unknown]>;
  solution: string;
}

export const codeTasks: readonly CodeTask[] = [
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
