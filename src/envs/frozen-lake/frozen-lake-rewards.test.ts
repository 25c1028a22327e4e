/** FrozenLake's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeFrozenLake } from './env.ts';
import { frozenLakeExpert } from './expert.ts';

const env = makeFrozenLake({ formatPenalty: 0.1 });
const map = ['P_O_', '_O__', '___G'];

pinRewards('frozen-lake', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: frozenLakeExpert() })),
    expected: [
      { rewards: [1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 0, 0, 1], end: 'done' },
    ],
  },
  {
    name: 'invalid turns, then the expert',
    play: () =>
      playScript(env, { seed: 4, moves: ['no tags', '<answer>Jump</answer>'], thenExpert: frozenLakeExpert() }),
    expected: { rewards: [-0.1, -0.1, 0, 1], end: 'done' },
  },
  {
    name: 'into a hole',
    play: () =>
      playScript(env, { seed: 0, task: { map }, moves: ['<answer>Right</answer>', '<answer>Right</answer>'] }),
    expected: { rewards: [0, 0], end: 'done' },
  },
  {
    name: 'out of steps: invalid turns and wall bumps',
    play: () =>
      playSeeds(makeFrozenLake({ formatPenalty: 0.1, maxSteps: 3 }), [0, 1], (seed) => ({
        seed,
        task: { map },
        moves: seed === 0 ? ['x', 'y', 'z'] : ['<answer>Up</answer>', '<answer>Left</answer>', 'x'],
      })),
    expected: [
      { rewards: [-0.1, -0.1, -0.1], end: 'truncated' },
      { rewards: [0, 0, -0.1], end: 'truncated' },
    ],
  },
  {
    name: 'several moves a turn',
    play: () =>
      playScript(makeFrozenLake({ formatPenalty: 0.1, maxActionsPerTurn: 5 }), {
        seed: 0,
        task: { map },
        moves: ['<answer>Down || Down</answer>', '<answer>Right || Right || Right || Up</answer>'],
      }),
    expected: { rewards: [0, 1], end: 'done' },
  },
  {
    name: 'slippery, random moves, seeds 0-5',
    play: () =>
      playSeeds(makeFrozenLake({ slippery: true, formatPenalty: 0.1 }), [0, 1, 2, 3, 4, 5], (seed) => ({
        seed,
        moves: [],
        thenExpert: frozenLakeExpert({ seed, randomActionRate: 0.5 }),
      })),
    expected: [
      { rewards: [1], end: 'done' },
      { rewards: [0, 0, 1], end: 'done' },
      { rewards: [0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'truncated' },
      { rewards: [0, 0, 1], end: 'done' },
    ],
  },
]);
