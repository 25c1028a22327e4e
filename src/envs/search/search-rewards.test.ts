/** Search's step rewards, pinned (issue 31: the values its named reward components must keep). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError, type Observation } from '../../core/index.ts';
import { formatToolCall } from '../action-format.ts';
import type { Expert } from '../expert.ts';
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeSearch, type SearchPrivileged } from './env.ts';
import { searchExpert } from './expert.ts';

const composite = { citationWeight: 0.5, searchCostWeight: 0.2, hallucinationWeight: 0.3, formatPenalty: 0.1 };
const env = makeSearch(composite);
/** Answers right, citing the supporting articles (`cited` of them). */
const citing = (cited: number): Expert => ({
  act: (observation: Observation) => {
    const { answer, support } = observation.privileged as SearchPrivileged;
    return `<answer>${answer} (sources: ${support.slice(0, cited).join('; ')})</answer>`;
  },
});

pinRewards('search', [
  {
    name: 'the expert, exact match only, seeds 0-3',
    play: () => playSeeds(makeSearch(), [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: searchExpert() })),
    expected: [
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
    ],
  },
  {
    name: 'the expert, composite reward, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: searchExpert() })),
    expected: [
      { rewards: [0, 1.4333333333333333], end: 'done' },
      { rewards: [0, 1.4333333333333333], end: 'done' },
      { rewards: [0, 1.4333333333333333], end: 'done' },
      { rewards: [0, 1.4333333333333333], end: 'done' },
    ],
  },
  {
    name: 'searches, then answers citing all, one or no supporting article',
    play: () =>
      playSeeds(env, [0, 1, 2], (seed) => ({
        seed: seed + 10,
        moves: [],
        thenExpert: {
          act: (observation) =>
            (observation.data as { queries: string[] }).queries.length < 3 - seed
              ? searchExpert().act(observation)
              : citing(2 - seed).act(observation),
        },
      })),
    expected: [
      { rewards: [0, 1.4333333333333333], end: 'done' },
      { rewards: [0, 1.4333333333333333], end: 'done' },
      { rewards: [0, 0.9333333333333333], end: 'done' },
    ],
  },
  {
    name: 'a wrong ungrounded answer; a wrong grounded one; over the search budget',
    play: () =>
      playSeeds(makeSearch({ ...composite, searchBudget: 1 }), [0, 1, 2], (seed) => ({
        seed,
        moves:
          [
            ['<answer>Zzyzx Nobody</answer>'],
            ['<search> the </search>', '<answer>the</answer>'],
            [
              '<search> river </search>',
              formatToolCall({ name: 'search', arguments: { query: 'town' } }),
              '<answer>x</answer>',
            ],
          ][seed] ?? [],
      })),
    expected: [
      { rewards: [-0.3], end: 'done' },
      { rewards: [0, -0.5], end: 'done' },
      { rewards: [0, 0, -0.5], end: 'done' },
    ],
  },
  {
    name: 'invalid turns until out of turns',
    play: () => playScript(env, { seed: 0, moves: ['x', '<search></search>', 'y', 'z'] }),
    expected: { rewards: [-0.1, -0.1, -0.1, -0.1], end: 'truncated' },
  },
]);

test('a question without supporting articles is refused at reset: its citation reward would be 0/0 (it scored NaN)', async () => {
  const task = { question: 'Who?', answer: 'Tarsil', support: [], hops: 1 as const };
  await assert.rejects(makeSearch().reset({ seed: 0, task }), InvalidArgumentError);
});
