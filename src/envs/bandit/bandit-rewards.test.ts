/** The bandit's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { pinRewards, playSeeds } from '../reward-pin.ts';
import { makeBandit } from './env.ts';
import { banditExpert } from './expert.ts';

const env = makeBandit({ formatPenalty: 0.25 });
const seeds = [0, 1, 2, 3, 4, 5, 6, 7];

pinRewards('bandit', [
  {
    name: 'arm A, seeds 0-7',
    play: () => playSeeds(env, seeds, (seed) => ({ seed, moves: ['<answer>A</answer>'] })),
    expected: [
      { rewards: [0], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [0], end: 'done' },
    ],
  },
  {
    name: 'the expert (arm B), seeds 0-7',
    play: () => playSeeds(env, seeds, (seed) => ({ seed, moves: [], thenExpert: banditExpert() })),
    expected: [
      { rewards: [0], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
    ],
  },
  {
    name: 'invalid answers',
    play: () => playSeeds(env, [0, 1], (seed) => ({ seed, moves: [seed === 0 ? 'no tags' : '<answer>C</answer>'] })),
    expected: [
      { rewards: [-0.25], end: 'truncated' },
      { rewards: [-0.25], end: 'truncated' },
    ],
  },
]);
