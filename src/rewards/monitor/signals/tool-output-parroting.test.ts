import { test } from 'node:test';
import assert from 'node:assert/strict';
import { at } from '../../../core/indexing.ts';
import { sumEpisode } from '../monitor-test-fixture.ts';
import { firedAt, readings } from './signal-test-helpers.ts';

test('tool-output-parroting: rewarded answers that paste the whole notes passage fire', () => {
  const parroting = readings('tool-output-parroting', {
    iterations: 2,
    change: (iteration, options) => {
      if (iteration === 1) return options;
      const episode = sumEpisode(options);
      const notes = /<information>(.*)<\/information>/.exec(at(episode.turns, 0).observation)?.[1] ?? '';
      const turns = [
        ...episode.turns.slice(0, -1),
        { action: `<answer>${notes} So: ${options.a + options.b}</answer>`, observation: 'correct' },
      ];
      return { ...episode, turns, totalReward: 1.1, success: true };
    },
  });
  assert.deepEqual(firedAt(parroting), [2]);
  assert.equal(at(parroting, 1).statistic, 1);
  assert.match(at(parroting, 1).message, /32 of 32 rewarded answers \(100\.0%\) repeated a whole tool output/);
});

test('tool-output-parroting: a calculator’s short result given as the answer is not parroting', () => {
  // Every healthy answer equals the calculator's <tool_response> (the sum): under minToolOutputChars, not counted.
  const healthy = readings('tool-output-parroting', { iterations: 2 });
  assert.deepEqual(firedAt(healthy), []);
  assert.equal(at(healthy, 1).statistic, 0);
});
