import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../../core/indexing.ts';
import { firedAt, readings } from './signal-test-helpers.ts';

test('answer-leakage: an observation that carries the task’s answer, copied into rewarded replies, fires', () => {
  const leaking = readings('answer-leakage', {
    iterations: 3,
    change: (iteration, options) =>
      iteration < 2
        ? options
        : { ...options, answer: String(options.a + options.b), observationNote: `Hint: ${options.a + options.b}. ` },
  });
  assert.deepEqual(firedAt(leaking), [2, 3]);
  assert.equal(at(leaking, 1).statistic, 1);
  assert.match(at(leaking, 1).message, /32 of 32 rewarded answers \(100\.0%\) were text the episode had been shown/);
  assert.equal(at(leaking, 0).statistic, 0, 'the verdict after the final reply ("wrong: 582") is not a leak');
});

test('answer-leakage: text every task is shown (a template), short answers and too few tasks are not leaks', () => {
  const template = readings('answer-leakage', {
    iterations: 2,
    change: (_iteration, options) => ({
      ...options,
      answer: 'no answer',
      observationNote: 'Write no answer if unsure. ',
    }),
  });
  assert.deepEqual(firedAt(template), []);
  assert.equal(at(template, 1).statistic, 0);
  const short = readings('answer-leakage', {
    iterations: 2,
    change: (_iteration, options) => ({ ...options, a: 1, b: 2, answer: '3', observationNote: 'Hint: 3. ' }),
  });
  assert.deepEqual(firedAt(short), []);
  assert.equal(at(short, 1).statistic, undefined, 'answers under minAnswerChars are no evidence');
  const fewTasks = readings('answer-leakage', {
    iterations: 2,
    groups: 2,
    groupSize: 8,
    change: (_iteration, options) => ({ ...options, observationNote: `Hint: ${options.a + options.b}. ` }),
  });
  assert.deepEqual(firedAt(fewTasks), []);
});
