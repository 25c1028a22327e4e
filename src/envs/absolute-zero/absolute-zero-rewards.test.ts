/** Absolute Zero's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { formatAnswer } from '../action-format.ts';
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeAbsoluteZero } from './env.ts';
import { absoluteZeroExpert } from './expert.ts';

const env = makeAbsoluteZero({ formatPenalty: 0.1 });
const propose = (program: string, input: unknown) => formatAnswer(JSON.stringify({ program, input }));
const square = propose('function f(x) { return x * x; }', 3);

pinRewards('absolute-zero', [
  {
    name: 'the expert, seeds 0-2',
    play: () => playSeeds(env, [0, 1, 2], (seed) => ({ seed, moves: [], thenExpert: absoluteZeroExpert({ seed }) })),
    expected: [
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
    ],
  },
  {
    name: 'invalid turns, a proposal, a wrong solve; a rejected proposal',
    play: () =>
      playSeeds(env, [0, 1], (seed) => ({
        seed,
        moves:
          seed === 0
            ? ['x', '<answer>not json</answer>', square, '<answer>8</answer>']
            : [propose('function f(x) { throw new Error("no"); }', 1)],
      })),
    expected: [
      { rewards: [-0.1, -0.1, 0, 0], end: 'done' },
      { rewards: [0], end: 'done' },
    ],
  },
  {
    name: 'invalid turns until out of turns',
    play: () => playScript(env, { seed: 0, moves: ['x', 'y', 'z', 'w'] }),
    expected: { rewards: [-0.1, -0.1, -0.1, -0.1], end: 'truncated' },
  },
  {
    name: 'learnability with a solver: half right, all right',
    play: () =>
      playSeeds(
        makeAbsoluteZero(
          { solverSamples: 4 },
          {
            solver: async (prompt) =>
              prompt.includes('x * x')
                ? ['<answer>9</answer>', 'junk', '<answer>9</answer>', '<answer>1</answer>']
                : ['<answer>9</answer>'],
          },
        ),
        [0, 1],
        (seed) => ({
          seed,
          moves: [seed === 0 ? square : propose('function f(x) { return 9; }', 0), '<answer>9</answer>'],
        }),
      ),
    expected: [
      { rewards: [0.5, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
    ],
  },
]);
