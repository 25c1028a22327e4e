import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { groupReward, reward } from './reward.ts';
import { rubric } from './rubric.ts';

interface Reply {
  text: string;
  expected: string;
}

const correct = reward<Reply>('correct', (c) => (c.text.trim() === c.expected ? 1 : 0));
const boxed = reward<Reply>('boxed', (c) => (c.text.startsWith('[') ? 1 : 0), { kind: 'format' });

test('a reward keeps its name and kind; bad names are refused', () => {
  assert.equal(correct.name, 'correct');
  assert.equal(correct.kind, 'outcome');
  assert.equal(boxed.kind, 'format');
  assert.throws(() => reward('Has Space', () => 0), InvalidArgumentError);
});

test('rubric: weighted sum with every component kept', async () => {
  const score = await rubric([correct, boxed], [1, 0.25]).score({ text: '[4]', expected: '4' });
  assert.deepEqual(score, { ok: true, total: 0.25, components: { correct: 0, boxed: 1 } });
  const byName = await rubric([correct, boxed], { boxed: 0.5 }).score({ text: '4', expected: '4' });
  assert.deepEqual(byName, { ok: true, total: 1, components: { correct: 1, boxed: 0 } });
});

test('rubric: a throwing or non-finite component is a named failure, never 0', async () => {
  const throws = reward<Reply>('judge', () => {
    throw new TypeError('endpoint down');
  });
  const nan = reward<Reply>('length', () => Number.NaN);
  const score = await rubric([correct, throws, nan]).score({ text: '4', expected: '4' });
  assert.equal(score.ok, false);
  assert.deepEqual(score.components, { correct: 1 });
  if (!score.ok) {
    assert.match(score.failures.judge ?? '', /TypeError: endpoint down/);
    assert.match(score.failures.length ?? '', /NaN, not a finite number/);
  }
});

test('rubric: a group reward sees the whole group; a wrong-length answer fails every member', async () => {
  const rank = groupReward<Reply>('rank', async (group) => group.map((_, i) => i / (group.length - 1)));
  const scores = await rubric([correct, rank]).scoreGroup([
    { text: '4', expected: '4' },
    { text: '5', expected: '4' },
    { text: '4', expected: '4' },
  ]);
  assert.deepEqual(
    scores.map((s) => (s.ok ? s.total : null)),
    [1, 0.5, 2],
  );
  const short = groupReward<Reply>('short', async () => [1]);
  const failed = await rubric([short]).scoreGroup([
    { text: 'a', expected: 'a' },
    { text: 'b', expected: 'a' },
  ]);
  assert.deepEqual(
    failed.map((s) => s.ok),
    [false, false],
  );
});

test('rubric: refuses duplicate names, unknown or non-finite weights, a wrong weight count', () => {
  assert.throws(() => rubric([correct, correct]), /appears twice/);
  assert.throws(() => rubric([correct], { other: 1 }), /not one of correct/);
  assert.throws(() => rubric([correct], [Number.POSITIVE_INFINITY]), /not finite/);
  assert.throws(() => rubric([correct, boxed], [1]), /1 weights for 2 rewards/);
  assert.throws(() => rubric([]), /at least one/);
});
