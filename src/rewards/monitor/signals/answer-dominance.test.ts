import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../../core/indexing.ts';
import { sumEpisode } from '../monitor-test-fixture.ts';
import { firedAt, readings } from './signal-test-helpers.ts';

test('answer-dominance: one task’s answer taking over the others (bench:real’s "31") fires', () => {
  const leaking = readings('answer-dominance', {
    iterations: 4,
    change: (iteration, options, rng) =>
      iteration <= 2 || rng.next() < 0.2 ? options : sumEpisode({ ...options, answer: '31', correct: true }),
  });
  assert.deepEqual(firedAt(leaking), [3, 4]);
  assert.ok((at(leaking, 2).statistic ?? 0) >= 0.6);
  assert.match(at(leaking, 2).message, /of the tasks' answers are "31" \(early mean 9\.4%/);
});

test('answer-dominance: a closed answer space (a bandit’s arms) converging on the best arm does not fire', () => {
  const arms = readings('answer-dominance', {
    iterations: 4,
    change: (iteration, options, rng) => {
      const best = rng.next() < (iteration <= 2 ? 0.5 : 0.95);
      return sumEpisode({ ...options, answer: best ? 'arm b' : 'arm a', correct: best });
    },
  });
  assert.ok((at(arms, 3).statistic ?? 0) > 0.85);
  assert.deepEqual(firedAt(arms), []);
  assert.match(at(arms, 3).message, /answer space closed/);
  // Each task converging on its own right answer is not dominance.
  const converged = readings('answer-dominance', {
    iterations: 4,
    change: (iteration, options) => (iteration <= 2 ? options : sumEpisode({ ...options, answer: undefined })),
  });
  assert.deepEqual(firedAt(converged), []);
});
