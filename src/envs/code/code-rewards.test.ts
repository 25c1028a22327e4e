/** Code's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { at } from '../../core/indexing.ts';
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { splitSeeds } from '../split.ts';
import { makeCode } from './env.ts';
import { codeExpert } from './expert.ts';
import { codeTasks } from './tasks.ts';

const env = makeCode({ formatPenalty: 0.1 });
const task = at(
  codeTasks.filter((candidate) => candidate.id === 'fizzbuzz'),
  0,
  'fizzbuzz',
);

pinRewards('code', [
  {
    name: 'the expert, two test seeds',
    play: () => playSeeds(env, splitSeeds('test', 2), (seed) => ({ seed, moves: [], thenExpert: codeExpert() })),
    expected: [
      { rewards: [1], end: 'done' },
      { rewards: [1], end: 'done' },
    ],
  },
  {
    name: 'half the tests, a syntax error, a wrong name',
    play: () =>
      playSeeds(env, [0, 1, 2], (seed) => ({
        seed,
        task,
        moves:
          [
            ["<answer>function fizzBuzz(n) { return n % 3 === 0 ? 'Fizz' : 'Buzz'; }</answer>"],
            ['<answer>function fizzBuzz(n) { return </answer>'],
            ['<answer>function fizz(n) { return 1; }</answer>'],
          ][seed] ?? [],
      })),
    expected: [
      { rewards: [0.5], end: 'done' },
      { rewards: [0], end: 'done' },
      { rewards: [0], end: 'done' },
    ],
  },
  {
    name: 'an invalid turn, then three tests of four',
    play: () =>
      playScript(env, {
        seed: 0,
        task,
        moves: [
          'x',
          "<answer>function fizzBuzz(n) { return n === 15 ? 'x' : n === 3 ? 'Fizz' : n === 5 ? 'Buzz' : String(n); }</answer>",
        ],
      }),
    expected: { rewards: [-0.1, 0.75], end: 'done' },
  },
  {
    name: 'invalid turns until out of turns',
    play: () => playScript(env, { seed: 0, task, moves: ['x', 'y'] }),
    expected: { rewards: [-0.1, -0.1], end: 'truncated' },
  },
]);
