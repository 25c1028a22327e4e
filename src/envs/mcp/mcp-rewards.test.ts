/** The MCP files env's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { after } from 'node:test';
import { formatToolCall } from '../action-format.ts';
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { mcpFilesExpert } from './expert.ts';
import { makeMcpFiles, openFilesWorkspace } from './files-env.ts';

const workspace = openFilesWorkspace({ workspaceSeed: 11, noteCount: 24 });
after(async () => (await workspace).close());
const env = makeMcpFiles({ formatPenalty: 0.1 }, { workspace });

pinRewards('mcp-files', [
  {
    name: 'the expert, seeds 0-2',
    play: () => playSeeds(env, [0, 1, 2], (seed) => ({ seed, moves: [], thenExpert: mcpFilesExpert() })),
    expected: [
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
      { rewards: [0, 1], end: 'done' },
    ],
  },
  {
    name: 'bad arguments (invalid), an unknown tool (invalid), a failing read, a wrong answer',
    play: () =>
      playScript(env, {
        seed: 3,
        moves: [
          formatToolCall({ name: 'read_text_file', arguments: { path: 3 } }),
          formatToolCall({ name: 'rm', arguments: {} }),
          formatToolCall({ name: 'read_text_file', arguments: { path: 'notes/none.txt' } }),
          '<answer>wrong</answer>',
        ],
      }),
    expected: { rewards: [-0.1, -0.1, 0, 0], end: 'done' },
  },
]);
