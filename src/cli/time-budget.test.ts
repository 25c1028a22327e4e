import assert from 'node:assert/strict';
import { test } from 'node:test';
import { budgetMarginSeconds, TimeBudget } from './time-budget.ts';

/** A budget on a clock the test moves by hand (seconds). */
function budgetAt(settings: { maxMinutes: number; testEpisodes?: number; episodesPerIteration?: number }) {
  let seconds = 0;
  const budget = new TimeBudget({ testEpisodes: 192, episodesPerIteration: 16, ...settings }, 0, () => seconds * 1000);
  return { budget, advance: (by: number) => (seconds += by) };
}

test('the budget stops before an iteration whose end, with the timed test after RL, would pass it', () => {
  // 60 min = 3600 s; warm start 900 s, test 600 s: the iterations start at 1500 s.
  const { budget, advance } = budgetAt({ maxMinutes: 60 });
  advance(900);
  budget.testTook(600);
  advance(600);
  budget.iterationsStart();
  const stops: boolean[] = [];
  for (let i = 0; i < 12; i++) {
    advance(200);
    stops.push(budget.exhausted());
  }
  // After iteration k: 1500 + 200k + 200 (the next) + 600 (the test) + 60 (the margin) > 3600 ⇔ k > 6.2.
  const limit = (3600 - 1500 - 200 - 600 - budgetMarginSeconds) / 200;
  assert.deepEqual(
    stops,
    stops.map((_, i) => i + 1 > limit),
  );
  assert.equal(stops.indexOf(true), 6, 'stops after iteration 7: 2900 s + 200 + 660 > 3600');
});

test('the longest iteration so far is the estimate of the next (a slow iteration is not forgotten)', () => {
  const { budget, advance } = budgetAt({ maxMinutes: 20 });
  budget.testTook(100);
  budget.iterationsStart();
  advance(500);
  assert.equal(budget.exhausted(), false, '500 + 500 + 160 ≤ 1200');
  advance(50);
  // 550 s in; the next is estimated at 500 s (the longest), not 50 s: 550 + 500 + 160 > 1200.
  assert.equal(budget.exhausted(), true);
  assert.match(
    budget.describe(),
    /--max-minutes 20\): 9 min in, another iteration \(~500 s\) and the test after RL \(~160 s/,
  );
});

test('without a timed test (a resumed run) each test episode counts as a whole iteration per episode', () => {
  // 192 test episodes at 16 episodes per 100 s iteration: 1200 s, plus the margin.
  const { budget, advance } = budgetAt({ maxMinutes: 30 });
  budget.iterationsStart();
  const stops: boolean[] = [];
  for (let i = 0; i < 6; i++) {
    advance(100);
    stops.push(budget.exhausted());
  }
  // After iteration k: 100k + 100 + 1260 > 1800 ⇔ k > 4.4.
  assert.deepEqual(stops, [false, false, false, false, true, true]);
  assert.match(budget.describe(), /test after RL \(~1260 s with the saves\)/);
});
