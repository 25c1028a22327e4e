/** The calculator's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { formatToolCall } from '../action-format.ts';
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeCalculator } from './env.ts';
import { calculatorExpert } from './expert.ts';

const env = makeCalculator({ formatPenalty: 0.2, toolCallReward: 0.3 });
const task = { expression: '2 + 3 * 4' };
const calculate = (expression: string) => formatToolCall({ name: 'calculator', arguments: { expression } });

pinRewards('calculator', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: calculatorExpert() })),
    expected: [
      { rewards: [0.3, 1], end: 'done' },
      { rewards: [0.3, 1], end: 'done' },
      { rewards: [0.3, 1], end: 'done' },
      { rewards: [0.3, 1], end: 'done' },
    ],
  },
  {
    name: 'tool calls (the first one to give the answer is paid), then the answer',
    play: () =>
      playScript(env, {
        seed: 0,
        task,
        moves: [calculate('2 + 3 * 4'), calculate('14'), calculate('2 +'), '<answer>14</answer>'],
      }),
    expected: { rewards: [0.3, 0, 0, 1], end: 'done' },
  },
  {
    name: 'a wrong answer; a wrong tool call then the answer',
    play: () =>
      playSeeds(env, [0, 1], (seed) => ({
        seed,
        task,
        moves: seed === 0 ? ['<answer>13</answer>'] : [calculate('2 + 3'), '<answer>14</answer>'],
      })),
    expected: [
      { rewards: [0], end: 'done' },
      { rewards: [0, 1], end: 'done' },
    ],
  },
  {
    name: 'invalid turns until out of turns',
    play: () => playScript(env, { seed: 0, task, moves: ['x', '<answer></answer>', 'y', 'z'] }),
    expected: { rewards: [-0.2, -0.2, -0.2, -0.2], end: 'truncated' },
  },
  {
    name: 'requireToolCall, last-integer answers',
    play: () =>
      playSeeds(
        makeCalculator({
          requireToolCall: true,
          answerFormat: 'last-integer',
          toolCallReward: 0.5,
          formatPenalty: 0.1,
        }),
        [0, 1, 2],
        (seed) => ({
          seed,
          task,
          moves:
            [['It is 14'], [calculate('2 + 3 * 4'), 'So 14'], ['no number', calculate('14'), 'The answer is 15']][
              seed
            ] ?? [],
        }),
      ),
    expected: [
      { rewards: [0], end: 'done' },
      { rewards: [0.5, 1], end: 'done' },
      { rewards: [-0.1, 0.5, 0], end: 'done' },
    ],
  },
]);
