import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../../core/indexing.ts';
import { sumEpisode } from '../monitor-test-fixture.ts';
import { firedAt, readings } from './signal-test-helpers.ts';

test('format-only-reward: reward paid by the format component alone fires', () => {
  const formatOnly = readings('format-only-reward', {
    iterations: 2,
    change: (iteration, options) => (iteration === 1 ? options : sumEpisode({ ...options, answer: 'I am not sure' })),
  });
  assert.deepEqual(firedAt(formatOnly), [2]);
  assert.equal(at(formatOnly, 1).statistic, 1);
  assert.equal(at(formatOnly, 1).values?.['episodes-share'], 1);
  assert.match(at(formatOnly, 1).message, /format components \(format\) paid 100\.0% of the positive reward; 32 of 32/);
});

test('format-only-reward: silent without a spec or a format component, and below the evidence minimum', () => {
  const broken = {
    change: (_i: number, options: Parameters<typeof sumEpisode>[0]) => sumEpisode({ ...options, answer: 'x' }),
  };
  const outcomeOnly = { names: ['correct'], weights: { correct: 1 }, kinds: { correct: 'outcome' as const } };
  assert.deepEqual(firedAt(readings('format-only-reward', broken, { rewardSpec: outcomeOnly })), []);
  const few = readings('format-only-reward', { ...broken, groups: 1, groupSize: 4 });
  assert.deepEqual(firedAt(few), []);
  assert.equal(at(few, 0).statistic, undefined);
});
