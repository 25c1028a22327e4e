import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runRepoTests, runTrustedTests, testId } from './run-tests.ts';

const trustedFile = (body: string) =>
  `const assert = require('node:assert/strict');\nconst lib = require('../src/lib.js');\nmodule.exports = {\n${body}\n};\n`;

test('copy-only boundary: classes, async functions, Maps and thrown errors work from trusted tests; data is copied', async () => {
  const candidate = {
    'src/lib.js': `
      class Counter { constructor(start) { this.count = start; } add(n) { this.count += n; return this; } get double() { return this.count * 2; } }
      const shared = { items: [1, 2] };
      module.exports = {
        Counter,
        async later(x) { await null; return x + 1; },
        tally(words) { const m = new Map(); for (const w of words) m.set(w, (m.get(w) || 0) + 1); return m; },
        fail() { throw new TypeError('bad input'); },
        mutate(value) { value.items.push(3); return value.items.length; },
        shared,
      };`,
  };
  const trusted = {
    'test/lib.test.js': trustedFile(`
      'class instances': () => { const c = new lib.Counter(2); c.add(3).add(1); assert.equal(c.count, 6); assert.equal(c.double, 12); },
      'async results': async () => { assert.equal(await lib.later(4), 5); },
      'maps copy out': () => { assert.deepEqual(lib.tally(['a', 'b', 'a']), new Map([['a', 2], ['b', 1]])); },
      'errors become host errors': () => { assert.throws(() => lib.fail(), { name: 'TypeError', message: 'bad input' }); assert.throws(() => lib.fail(), TypeError); },
      'arguments are copied in': () => { const value = { items: [1] }; assert.equal(lib.mutate(value), 2); assert.deepEqual(value.items, [1]); },
      'results are copied out': () => { const items = lib.shared.items; items.push(99); assert.deepEqual(lib.shared.items, [1, 2]); },
      'host functions do not cross': () => { assert.throws(() => lib.mutate(() => {}), /a function cannot be passed to candidate code/); },`),
  };
  const run = await runTrustedTests(candidate, trusted);
  assert.equal(run.failure, null);
  assert.deepEqual(
    run.outcomes.filter((outcome) => !outcome.pass),
    [],
  );
  assert.equal(run.outcomes.length, 7);
  assert.equal(run.outcomes[0]?.testId, testId(trusted['test/lib.test.js'], 'class instances'));
});

test('copy-only boundary: candidate code finds no host object — not via constructors, stack traces or arguments', async () => {
  const candidate = {
    'src/lib.js': `
      const found = [];
      Error.prepareStackTrace = (error, sites) => { try { found.push(typeof sites.constructor.constructor('return process')()); } catch (e) { found.push('blocked'); } return 'trace'; };
      module.exports = {
        probe(...args) {
          for (const value of [this, ...args, module, require, exports]) {
            try { found.push(typeof value.constructor.constructor('return process')()); } catch (e) { found.push('blocked'); }
          }
          try { new Error('x').stack; } catch (e) { found.push('stack threw'); }
          try { found.push(typeof globalThis.process + ',' + typeof require('node:fs')); } catch (e) { found.push('no builtins'); }
          return found;
        },
        throwing() { throw new Error('boom'); },
      };`,
  };
  const trusted = {
    'test/lib.test.js': trustedFile(`
      'probe': () => { const found = lib.probe({ a: 1 }, [1], new Map()); assert.ok(found.every((entry) => entry === 'blocked' || entry === 'no builtins'), found.join()); },
      'a thrown candidate error keeps its message only': () => { try { lib.throwing(); } catch (error) { assert.equal(error.message, 'boom'); assert.match(error.stack, /boom/); } },`),
  };
  const run = await runTrustedTests(candidate, trusted);
  assert.deepEqual(
    run.outcomes.map((outcome) => [outcome.name, outcome.pass, outcome.error]),
    [
      ['probe', true, undefined],
      ['a thrown candidate error keeps its message only', true, undefined],
    ],
  );
});

test("run_tests (candidate realm): the snapshot's own tests run with the candidate assert; a loop is cut by the call timeout", async () => {
  const files = {
    'src/lib.js': 'module.exports = { add: (a, b) => a + b, spin() { for (;;) {} } };',
    'test/lib.test.js': `const assert = require('node:assert');\nconst lib = require('../src/lib.js');\nmodule.exports = {\n  adds: () => assert.equal(lib.add(2, 3), 5),\n  wrong: () => assert.deepStrictEqual([lib.add(1, 1)], [3]),\n  spins: () => lib.spin(),\n};\n`,
  };
  const run = await runRepoTests(files, { callTimeoutMs: 200 });
  assert.equal(run.failure, null);
  assert.deepEqual(
    run.outcomes.map((outcome) => [outcome.name, outcome.pass]),
    [
      ['adds', true],
      ['wrong', false],
      ['spins', false],
    ],
  );
  assert.match(run.outcomes[1]?.error ?? '', /expected \[3\], got \[2\]/);
  assert.match(run.outcomes[2]?.error ?? '', /timed out after 200ms/);
});
