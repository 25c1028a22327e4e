/** Math's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { formatToolCall } from '../action-format.ts';
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeMath } from './env.ts';
import { mathExpert } from './expert.ts';

const env = makeMath({ formatReward: 0.05, formatPenalty: 0.1 });
const task = { question: 'Half of 7?', solution: '7/2' };

pinRewards('math', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: mathExpert() })),
    expected: [
      { rewards: [0, 1.05], end: 'done' },
      { rewards: [0, 1.05], end: 'done' },
      { rewards: [0, 1.05], end: 'done' },
      { rewards: [0, 1.05], end: 'done' },
    ],
  },
  {
    name: 'right and wrong answers with and without a <think> block',
    play: () =>
      playSeeds(env, [0, 1, 2, 3], (seed) => ({
        seed,
        task,
        moves:
          [
            ['<answer>3.5</answer>'],
            ['<think>7 over 2</think><answer>7/2</answer>'],
            ['<think>guess</think><answer>4</answer>'],
            ['<think></think><answer>3</answer>'],
          ][seed] ?? [],
      })),
    expected: [
      { rewards: [1], end: 'done' },
      { rewards: [1.05], end: 'done' },
      { rewards: [0.05], end: 'done' },
      { rewards: [0], end: 'done' },
    ],
  },
  {
    name: 'a tool call, a throwing tool call, then the answer',
    play: () =>
      playScript(env, {
        seed: 0,
        task,
        moves: [
          formatToolCall({ name: 'calculator', arguments: { expression: '7 / 2' } }),
          formatToolCall({ name: 'calculator', arguments: { expression: '1 / 0' } }),
          '<think>ok</think><answer>3.5</answer>',
        ],
      }),
    expected: { rewards: [0, 0, 1.05], end: 'done' },
  },
  {
    name: 'invalid turns until out of turns',
    play: () => playScript(env, { seed: 0, task, moves: ['x', '<answer></answer>', 'y', 'z'] }),
    expected: { rewards: [-0.1, -0.1, -0.1, -0.1], end: 'truncated' },
  },
]);
