/** Memory recall's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeMemoryRecall } from './env.ts';
import { memoryRecallExpert } from './expert.ts';

const env = makeMemoryRecall({ formatPenalty: 0.1 });

pinRewards('memory-recall', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: memoryRecallExpert() })),
    expected: [
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], end: 'done' },
    ],
  },
  {
    name: 'replies, invalid turns, a wrong answer',
    play: () =>
      playScript(env, {
        seed: 4,
        moves: ['x'],
        thenExpert: { act: () => '<answer>0000</answer>' },
      }),
    expected: { rewards: [-0.1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'done' },
  },
  {
    name: 'random play, seeds 5-9',
    play: () =>
      playSeeds(env, [5, 6, 7, 8, 9], (seed) => ({
        seed,
        moves: [],
        thenExpert: memoryRecallExpert({ seed, randomActionRate: 0.5 }),
      })),
    expected: [
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], end: 'done' },
    ],
  },
]);
