/** Countdown's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { pinRewards, playSeeds } from '../reward-pin.ts';
import { makeCountdown } from './env.ts';
import { countdownExpert } from './expert.ts';

const env = makeCountdown({ formatPenalty: 0.1, partialReward: 0.1 });
const task = { numbers: [25, 5, 3, 7], target: 60 };

pinRewards('countdown', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: countdownExpert() })),
    expected: [
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
    ],
  },
  {
    name: 'correct, readable but wrong, unreadable, numbers reused',
    play: () =>
      playSeeds(env, [0, 1, 2, 3], (seed) => ({
        seed,
        task,
        moves:
          [
            ['<answer>(25 - 5) * 3</answer>'],
            ['<think>try</think><answer>25 + 5 + 3</answer>'],
            ['<answer>sixty</answer>'],
            ['<answer>25 + 25 + 5 + 5</answer>'],
          ][seed] ?? [],
      })),
    expected: [
      { rewards: [1], end: 'done' },
      { rewards: [0.1], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [0.1], end: 'done' },
    ],
  },
  {
    name: 'an invalid turn then the answer; invalid turns until out of turns',
    play: () =>
      playSeeds(makeCountdown({ formatPenalty: 0.1, partialReward: 0.25 }), [0, 1], (seed) => ({
        seed,
        task,
        moves: seed === 0 ? ['x', '<answer>25 * 3</answer>'] : ['x', 'y'],
      })),
    expected: [
      { rewards: [-0.1, 0.25], end: 'done' },
      { rewards: [-0.1, -0.1], end: 'truncated' },
    ],
  },
  {
    name: 'default options, random answers, seeds 4-7',
    play: () =>
      playSeeds(makeCountdown(), [4, 5, 6, 7], (seed) => ({
        seed,
        moves: [],
        thenExpert: countdownExpert({ seed, randomActionRate: 1 }),
      })),
    expected: [
      { rewards: [0.1], end: 'done' },
      { rewards: [0.1], end: 'done' },
      { rewards: [0.1], end: 'done' },
      { rewards: [0.1], end: 'done' },
    ],
  },
]);
