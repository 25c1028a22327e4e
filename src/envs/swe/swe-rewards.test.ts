/** The software-fix env's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { formatToolCall } from '../action-format.ts';
import { pinRewards, playScript } from '../reward-pin.ts';
import { makeSwe } from './env.ts';
import { sweExpert } from './expert.ts';

const env = makeSwe({ formatPenalty: 0.1 });

pinRewards('swe', [
  {
    name: 'an invalid turn, then the expert',
    play: () => playScript(env, { seed: 0, moves: ['<answer>x</answer x>'], thenExpert: sweExpert() }),
    expected: { rewards: [-0.1, 0, 0, 1], end: 'done' },
  },
  {
    name: 'tools, a throwing tool, then submit unfixed',
    play: () =>
      playScript(env, {
        seed: 1,
        moves: [
          formatToolCall({ name: 'list_files', arguments: {} }),
          formatToolCall({ name: 'read_file', arguments: { path: 'no/such/file.js' } }),
          formatToolCall({ name: 'shell', arguments: {} }),
          '<answer>submit</answer>',
        ],
      }),
    expected: { rewards: [0, 0, -0.1, 0], end: 'done' },
  },
  {
    name: 'invalid turns until out of turns',
    play: () => playScript(makeSwe({ formatPenalty: 0.1, maxTurns: 3 }), { seed: 0, moves: ['x', 'y', 'z'] }),
    expected: { rewards: [-0.1, -0.1, -0.1], end: 'truncated' },
  },
]);
