/**
 * A small `node:assert/strict` for the candidate realm, as source evaluated there (a host module
 * cannot be handed in: any host object leads back to the host's `Function`). Candidate-side test
 * files (the agent's `run_tests`) `require('node:assert')` and get this: ok, equal, notEqual,
 * strictEqual, notStrictEqual, deepEqual, deepStrictEqual, notDeepEqual, notDeepStrictEqual,
 * throws, doesNotThrow, match, doesNotMatch, fail — strict semantics (Object.is, prototypes
 * compared). The reward never depends on it: trusted tests use the real one in the host realm.
 */
export const candidateAssertSource = String.raw`'use strict';
class AssertionError extends Error {
  constructor(message) { super(message); this.name = 'AssertionError'; this.code = 'ERR_ASSERTION'; }
}
const show = (value) => { try { return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? value + 'n' : String(JSON.stringify(value) ?? value); } catch { return String(value); } };
const fail = (message, fallback) => { throw message instanceof Error ? message : new AssertionError(message ?? fallback); };
function deepEqual(a, b, seen = new Map()) {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (seen.get(a) === b) return true;
  seen.set(a, b);
  if (a instanceof Date) return Object.is(a.getTime(), b.getTime());
  if (a instanceof RegExp) return String(a) === String(b);
  if (a instanceof Map) return a.size === b.size && [...a].every(([key, value]) => b.has(key) && deepEqual(value, b.get(key), seen));
  if (a instanceof Set) return a.size === b.size && [...a].every((value) => b.has(value));
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.prototype.hasOwnProperty.call(b, key) && deepEqual(a[key], b[key], seen));
}
function matches(error, expected) {
  if (expected === undefined) return true;
  if (typeof expected === 'function') return expected.prototype !== undefined && error instanceof expected ? true : expected.prototype === undefined ? expected(error) === true : false;
  if (expected instanceof RegExp) return expected.test(String(error && error.message !== undefined ? error.message : error));
  return Object.keys(expected).every((key) => (expected[key] instanceof RegExp ? expected[key].test(error[key]) : deepEqual(error[key], expected[key])));
}
function ok(value, message) { if (!value) fail(message, 'expected a truthy value, got ' + show(value)); }
const assert = Object.assign(ok, {
  AssertionError,
  ok,
  fail: (message) => fail(message, 'Failed'),
  equal: (a, b, message) => { if (!Object.is(a, b)) fail(message, 'expected ' + show(b) + ', got ' + show(a)); },
  notEqual: (a, b, message) => { if (Object.is(a, b)) fail(message, 'expected a value other than ' + show(b)); },
  deepEqual: (a, b, message) => { if (!deepEqual(a, b)) fail(message, 'expected ' + show(b) + ', got ' + show(a)); },
  notDeepEqual: (a, b, message) => { if (deepEqual(a, b)) fail(message, 'expected a value not deep-equal to ' + show(b)); },
  throws(run, expected, message) {
    try { run(); } catch (error) { if (!matches(error, expected)) fail(message, 'the error did not match: ' + show(error && error.message)); return; }
    fail(typeof expected === 'string' ? expected : message, 'Missing expected exception.');
  },
  doesNotThrow(run, message) { try { run(); } catch (error) { fail(message, 'Got unwanted exception: ' + show(error && error.message)); } },
  match: (text, pattern, message) => { if (!pattern.test(text)) fail(message, show(text) + ' does not match ' + String(pattern)); },
  doesNotMatch: (text, pattern, message) => { if (pattern.test(text)) fail(message, show(text) + ' matches ' + String(pattern)); },
});
assert.strictEqual = assert.equal;
assert.notStrictEqual = assert.notEqual;
assert.deepStrictEqual = assert.deepEqual;
assert.notDeepStrictEqual = assert.notDeepEqual;
assert.strict = assert;
module.exports = assert;
`;
