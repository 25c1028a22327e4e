/**
 * SWE-bench-style instances (P, C, T, δ) written for agentrl: a small CommonJS repository
 * snapshot C (source files and visible tests), an issue text P, hidden tests T (the fail-to-pass
 * tests the issue asks for; the visible tests are the pass-to-pass ones) and a gold patch δ (exact
 * find → replace edits). A test checks, for each, that the base fails the fail-to-pass tests
 * and the gold patch passes all tests. Tests are named by file and name (`TestRef`); scoring
 * runs the instance's own copies of those files and knows each test by its content hash.
 */
export interface Edit {
  path: string;
  find: string;
  replace: string;
}

/** A test: the file that holds it (in `hiddenTests` or the snapshot `files`) and its name. */
export interface TestRef {
  file: string;
  name: string;
}

export interface SweInstance {
  id: string;
  issue: string;
  /** The repository snapshot: path → content (includes the visible tests under test/). */
  files: Record<string, string>;
  /** Hidden test file added at evaluation: path → content. */
  hiddenTests: Record<string, string>;
  /** Hidden tests the fix must make pass (in `hiddenTests`). */
  failToPass: TestRef[];
  /** Visible tests that must keep passing (in `files`; scored from the instance's copy, not the agent's). */
  passToPass: TestRef[];
  goldPatch: Edit[];
}

interface Spec {
  id: string;
  issue: string;
  /** The module under test: its path (src/…) and code. */
  module: [path: string, code: string];
  /** Visible (pass-to-pass) tests: name → body. */
  visible: Record<string, string>;
  /** Hidden (fail-to-pass) tests: name → body. */
  hidden: Record<string, string>;
  gold: Array<[find: string, replace: string]>;
}

function testFile(modulePath: string, tests: Record<string, string>): string {
  const entries = Object.entries(tests).map(([name, body]) => `  ${JSON.stringify(name)}: () => {\n    ${body}\n  },`);
  return `const assert = require('node:assert/strict');\nconst lib = require('../${modulePath}');\n\nmodule.exports = {\n${entries.join('\n')}\n};\n`;
}

function instance(spec: Spec): SweInstance {
  const [path, code] = spec.module;
  const name = path.replace(/^src\//, '').replace(/\.js$/, '');
  const [visibleFile, hiddenFile] = [`test/${name}.test.js`, `test/${name}.issue.test.js`];
  return {
    id: spec.id,
    issue: spec.issue,
    files: {
      [path]: code,
      [visibleFile]: testFile(path, spec.visible),
      'package.json': `{ "name": "${spec.id}", "private": true }\n`,
    },
    hiddenTests: { [hiddenFile]: testFile(path, spec.hidden) },
    failToPass: Object.keys(spec.hidden).map((test) => ({ file: hiddenFile, name: test })),
    passToPass: Object.keys(spec.visible).map((test) => ({ file: visibleFile, name: test })),
    goldPatch: spec.gold.map(([find, replace]) => ({ path, find, replace })),
  };
}

export const sweInstances: readonly SweInstance[] = [
  instance({
    id: 'slugify-repeats',
    issue: 'slugify("a  b") gives "a--b": runs of spaces or dashes should become a single dash.',
    module: [
      'src/slugify.js',
      "function slugify(text) {\n  return text.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-');\n}\n\nmodule.exports = { slugify };\n",
    ],
    visible: {
      'simple words': "assert.equal(lib.slugify('Hello World'), 'hello-world');",
      'drops symbols': "assert.equal(lib.slugify('a!b?'), 'ab');",
    },
    hidden: {
      'collapses spaces': "assert.equal(lib.slugify('a   b'), 'a-b');",
      'collapses dashes': "assert.equal(lib.slugify('a - b'), 'a-b');",
    },
    gold: [[".replace(/ /g, '-');", ".replace(/[ -]+/g, '-');"]],
  }),
  instance({
    id: 'range-sum-inclusive',
    issue: 'rangeSum(a, b) is documented as inclusive of b, but rangeSum(1, 3) returns 3 instead of 6.',
    module: [
      'src/range.js',
      '/** Sum of the integers a..b, both included. */\nfunction rangeSum(a, b) {\n  let total = 0;\n  for (let i = a; i < b; i++) total += i;\n  return total;\n}\n\nmodule.exports = { rangeSum };\n',
    ],
    visible: { 'empty when b < a': 'assert.equal(lib.rangeSum(5, 2), 0);' },
    hidden: {
      'includes the end': 'assert.equal(lib.rangeSum(1, 3), 6);',
      'single value': 'assert.equal(lib.rangeSum(4, 4), 4);',
    },
    gold: [['i < b;', 'i <= b;']],
  }),
  instance({
    id: 'duration-hours',
    issue: 'parseDuration("1h30m") returns 30; hours are ignored. It should return minutes: 90.',
    module: [
      'src/duration.js',
      'function parseDuration(text) {\n  let minutes = 0;\n  const m = text.match(/(\\d+)m/);\n  if (m) minutes += Number(m[1]);\n  return minutes;\n}\n\nmodule.exports = { parseDuration };\n',
    ],
    visible: {
      'minutes only': "assert.equal(lib.parseDuration('45m'), 45);",
      empty: "assert.equal(lib.parseDuration(''), 0);",
    },
    hidden: {
      'hours and minutes': "assert.equal(lib.parseDuration('1h30m'), 90);",
      'hours only': "assert.equal(lib.parseDuration('2h'), 120);",
    },
    gold: [
      [
        '  return minutes;',
        '  const h = text.match(/(\\d+)h/);\n  if (h) minutes += 60 * Number(h[1]);\n  return minutes;',
      ],
    ],
  }),
  instance({
    id: 'stack-pop-empty',
    issue:
      'Stack.pop() on an empty stack returns undefined silently; it should throw an Error with the message "empty stack".',
    module: [
      'src/stack.js',
      'class Stack {\n  constructor() {\n    this.items = [];\n  }\n  push(x) {\n    this.items.push(x);\n  }\n  pop() {\n    return this.items.pop();\n  }\n  get size() {\n    return this.items.length;\n  }\n}\n\nmodule.exports = { Stack };\n',
    ],
    visible: {
      'push then pop':
        'const s = new lib.Stack(); s.push(1); s.push(2); assert.equal(s.pop(), 2); assert.equal(s.size, 1);',
    },
    hidden: { 'pop on empty throws': "assert.throws(() => new lib.Stack().pop(), { message: 'empty stack' });" },
    gold: [['  pop() {\n', "  pop() {\n    if (this.items.length === 0) throw new Error('empty stack');\n"]],
  }),
  instance({
    id: 'csv-quoted',
    issue:
      'splitCsvLine(\'a,"b,c",d\') splits inside the quotes. Quoted fields may contain commas; the quotes are not part of the value.',
    module: [
      'src/csv.js',
      "function splitCsvLine(line) {\n  return line.split(',');\n}\n\nmodule.exports = { splitCsvLine };\n",
    ],
    visible: {
      'plain fields': "assert.deepEqual(lib.splitCsvLine('a,b,c'), ['a', 'b', 'c']);",
      'empty fields': "assert.deepEqual(lib.splitCsvLine('a,,b'), ['a', '', 'b']);",
    },
    hidden: { 'quoted comma': "assert.deepEqual(lib.splitCsvLine('a,\"b,c\",d'), ['a', 'b,c', 'd']);" },
    gold: [
      [
        "  return line.split(',');",
        "  const out = [];\n  let field = '';\n  let quoted = false;\n  for (const ch of line) {\n    if (ch === '\"') quoted = !quoted;\n    else if (ch === ',' && !quoted) { out.push(field); field = ''; }\n    else field += ch;\n  }\n  out.push(field);\n  return out;",
      ],
    ],
  }),
  instance({
    id: 'median-numeric-sort',
    issue: 'median([10, 9, 2]) returns 2 (wrong). The values seem to be sorted as strings.',
    module: [
      'src/stats.js',
      'function median(values) {\n  const sorted = [...values].sort();\n  const mid = Math.floor(sorted.length / 2);\n  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;\n}\n\nmodule.exports = { median };\n',
    ],
    visible: {
      'small odd': 'assert.equal(lib.median([3, 1, 2]), 2);',
      'small even': 'assert.equal(lib.median([4, 1, 3, 2]), 2.5);',
    },
    hidden: { 'multi-digit values': 'assert.equal(lib.median([10, 9, 2]), 9);' },
    gold: [['.sort();', '.sort((a, b) => a - b);']],
  }),
  instance({
    id: 'title-case-small-words',
    issue:
      'titleCase("war and peace") gives "War And Peace". Small words (a, an, and, of, the, in) stay lower-case unless first.',
    module: [
      'src/title.js',
      "function titleCase(text) {\n  return text\n    .split(' ')\n    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))\n    .join(' ');\n}\n\nmodule.exports = { titleCase };\n",
    ],
    visible: { 'capitalises words': "assert.equal(lib.titleCase('hello world'), 'Hello World');" },
    hidden: {
      'small words stay lower': "assert.equal(lib.titleCase('war and peace'), 'War and Peace');",
      'first word capitalised': "assert.equal(lib.titleCase('the end of it'), 'The End of It');",
    },
    gold: [
      [
        '.map((word) => word.charAt(0)',
        ".map((word, i) => i > 0 && ['a', 'an', 'and', 'of', 'the', 'in'].includes(word) ? word : word.charAt(0)",
      ],
    ],
  }),
  instance({
    id: 'lru-refresh',
    issue:
      'LruCache.get(key) does not mark the key as recently used, so a key read just before an insert is still evicted.',
    module: [
      'src/lru.js',
      'class LruCache {\n  constructor(capacity) {\n    this.capacity = capacity;\n    this.map = new Map();\n  }\n  get(key) {\n    return this.map.get(key);\n  }\n  set(key, value) {\n    this.map.delete(key);\n    this.map.set(key, value);\n    if (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value);\n  }\n}\n\nmodule.exports = { LruCache };\n',
    ],
    visible: {
      'evicts the oldest':
        "const c = new lib.LruCache(2); c.set('a', 1); c.set('b', 2); c.set('c', 3); assert.equal(c.get('a'), undefined); assert.equal(c.get('c'), 3);",
    },
    hidden: {
      'get refreshes':
        "const c = new lib.LruCache(2); c.set('a', 1); c.set('b', 2); c.get('a'); c.set('c', 3); assert.equal(c.get('a'), 1); assert.equal(c.get('b'), undefined);",
    },
    gold: [
      [
        '  get(key) {\n    return this.map.get(key);',
        '  get(key) {\n    if (!this.map.has(key)) return undefined;\n    const value = this.map.get(key);\n    this.map.delete(key);\n    this.map.set(key, value);\n    return value;',
      ],
    ],
  }),
  instance({
    id: 'money-cents-padding',
    issue: 'formatCents(5) returns "$0.5"; it should be "$0.05". Cents always have two digits.',
    module: [
      'src/money.js',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the buggy module's own source, a template literal inside
      'function formatCents(cents) {\n  const dollars = Math.floor(cents / 100);\n  return `$${dollars}.${cents % 100}`;\n}\n\nmodule.exports = { formatCents };\n',
    ],
    visible: { 'two-digit cents': "assert.equal(lib.formatCents(1234), '$12.34');" },
    hidden: {
      'pads single-digit cents': "assert.equal(lib.formatCents(5), '$0.05');",
      'zero cents': "assert.equal(lib.formatCents(700), '$7.00');",
    },
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the fix replaces text in the module's template literal
    gold: [['${cents % 100}', "${String(cents % 100).padStart(2, '0')}"]],
  }),
  instance({
    id: 'word-count-spaces',
    issue: 'wordCount("a  b ") returns 4; repeated or trailing spaces must not count as words.',
    module: [
      'src/words.js',
      "function wordCount(text) {\n  if (text === '') return 0;\n  return text.split(' ').length;\n}\n\nmodule.exports = { wordCount };\n",
    ],
    visible: {
      'single spaces': "assert.equal(lib.wordCount('one two three'), 3);",
      'empty text': "assert.equal(lib.wordCount(''), 0);",
    },
    hidden: {
      'repeated spaces': "assert.equal(lib.wordCount('a  b '), 2);",
      'only spaces': "assert.equal(lib.wordCount('   '), 0);",
    },
    gold: [["  return text.split(' ').length;", "  return text.split(' ').filter((word) => word !== '').length;"]],
  }),
  instance({
    id: 'clamp-argument-order',
    issue: 'clamp(5, 0, 10) returns 10: the bounds look swapped. It should return 5 (clamp(value, min, max)).',
    module: [
      'src/clamp.js',
      'function clamp(value, min, max) {\n  return Math.max(max, Math.min(min, value));\n}\n\nmodule.exports = { clamp };\n',
    ],
    visible: { 'above the range': 'assert.equal(lib.clamp(15, 0, 10), 10);' },
    hidden: {
      'inside the range': 'assert.equal(lib.clamp(5, 0, 10), 5);',
      'below the range': 'assert.equal(lib.clamp(-3, 0, 10), 0);',
    },
    gold: [['Math.max(max, Math.min(min, value))', 'Math.min(max, Math.max(min, value))']],
  }),
  instance({
    id: 'chunk-remainder',
    issue: 'chunk([1, 2, 3, 4, 5], 2) drops the 5: the last, shorter chunk is lost.',
    module: [
      'src/chunk.js',
      'function chunk(items, size) {\n  const out = [];\n  for (let i = 0; i + size <= items.length; i += size) out.push(items.slice(i, i + size));\n  return out;\n}\n\nmodule.exports = { chunk };\n',
    ],
    visible: { 'even split': 'assert.deepEqual(lib.chunk([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);' },
    hidden: { 'keeps the remainder': 'assert.deepEqual(lib.chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);' },
    gold: [['i + size <= items.length', 'i < items.length']],
  }),
];
