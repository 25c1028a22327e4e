/** Sokoban's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeSokoban } from './env.ts';
import { sokobanExpert } from './expert.ts';

const env = makeSokoban({ formatPenalty: 0.1 });
/** A box on a target (pushed off it, then onto the other target) and a second box. */
const map = ['#######', '#P√_O_#', '#__X__#', '#######'];

pinRewards('sokoban', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: sokobanExpert() })),
    expected: [
      { rewards: [-0.1, -0.1, -0.1, 10.9], end: 'done' },
      { rewards: [-0.1, -0.1, -0.1, -0.1, 10.9], end: 'done' },
      { rewards: [-0.1, -0.1, 10.9], end: 'done' },
      { rewards: [-0.1, -0.1, -0.1, -0.1, 10.9], end: 'done' },
    ],
  },
  {
    name: 'invalid turns, then the expert',
    play: () => playScript(env, { seed: 4, moves: ['no tags', '<answer>Jump</answer>'], thenExpert: sokobanExpert() }),
    expected: { rewards: [-0.2, -0.2, -0.1, -0.1, -0.1, 10.9], end: 'done' },
  },
  {
    name: 'random moves until out of steps, seeds 5-8',
    play: () =>
      playSeeds(env, [5, 6, 7, 8], (seed) => ({
        seed,
        moves: [],
        thenExpert: sokobanExpert({ seed, randomActionRate: 1 }),
      })),
    expected: [
      { rewards: [-0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1], end: 'truncated' },
      { rewards: [-0.1, -0.1, -0.1, -0.1, -0.1, -0.1, 10.9], end: 'done' },
      { rewards: [-0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1], end: 'truncated' },
      { rewards: [-0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1, -0.1], end: 'truncated' },
    ],
  },
  {
    name: 'a box pushed off a target, then onto one',
    play: () =>
      playScript(env, {
        seed: 0,
        task: { map },
        moves: ['<answer>Right</answer>', '<answer>Right</answer>'],
      }),
    expected: { rewards: [-1.1, 0.9], end: 'open' },
  },
  {
    name: 'several moves a turn',
    play: () =>
      playSeeds(makeSokoban({ formatPenalty: 0.1, maxActionsPerTurn: 3 }), [0, 1], (seed) =>
        seed === 0
          ? { seed, task: { map }, moves: ['<answer>Right || Right || Down</answer>'] }
          : {
              seed,
              moves: ['<answer>Up || Up || Left</answer>', '<answer>Down || Right || Down</answer>', 'x'],
              thenExpert: sokobanExpert(),
            },
      ),
    expected: [
      // −0.1 −1 −0.1 +1 −0.1 (3 moves, a box off a target and onto one): −0.30000000000000016 summed move by
      // move before issue 31; the rubric sums the costs, then the pushes: −0.30000000000000004 (one ulp nearer −0.3)
      { rewards: [-0.30000000000000004], end: 'open' },
      { rewards: [-0.30000000000000004, -0.30000000000000004, -0.2, -0.1, -0.1, -0.1], end: 'truncated' },
    ],
  },
]);
