import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sameOperation } from './operation-match.ts';

test('sameOperation: the same integers and operators, order, spacing, spelling and parentheses free', () => {
  for (const call of ['37 * 23', '23*37', '37 × 23', '(37)*(23)', '037 * 23'])
    assert.ok(sameOperation(call, '37 * 23'), call);
  assert.ok(sameOperation('5 - 2 * 3', '2 * 3 - 5'));
  assert.ok(sameOperation('7 − 4', '7 - 4'));
});

test('sameOperation near misses: another operand, operator or count; no integers at all', () => {
  for (const call of ['37 * 24', '37 + 23', '37 * 23 * 1', '851', '37', '', 'thirty-seven times 23'])
    assert.ok(!sameOperation(call, '37 * 23'), call);
  assert.ok(!sameOperation('', ''));
});
