/** The negotiation's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeNegotiation } from './env.ts';
import { negotiationExpert } from './expert.ts';

const env = makeNegotiation({ formatPenalty: 0.1 });

pinRewards('negotiation', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: negotiationExpert() })),
    expected: [
      { rewards: [0, 0.5], end: 'done' },
      { rewards: [0, 0.5], end: 'done' },
      { rewards: [0, 0.8], end: 'done' },
      { rewards: [0, 0.9], end: 'done' },
    ],
  },
  {
    name: 'accept before a proposal (invalid), then a deal',
    play: () =>
      playSeeds(env, [0, 1, 2], (seed) => ({
        seed,
        moves: ['<answer>accept</answer>', `<answer>take ${seed} 1 0</answer>`, '<answer>accept</answer>'],
      })),
    expected: [
      { rewards: [-0.1, 0, 0.5], end: 'done' },
      { rewards: [-0.1, 0, 0.5], end: 'done' },
      { rewards: [-0.1, 0, 0.2], end: 'done' },
    ],
  },
  {
    name: 'no deal: proposals until out of turns',
    play: () =>
      playScript(env, {
        seed: 4,
        moves: ['<answer>take 1 0 0</answer>', '<answer>take 9 9 9</answer>', '<answer>take 0 1 0</answer>'],
        thenExpert: { act: () => '<answer>take 0 0 0</answer>' },
      }),
    expected: { rewards: [0, -0.1, 0, 0, 0, 0], end: 'truncated' },
  },
  {
    name: 'random play, seeds 5-10',
    play: () =>
      playSeeds(env, [5, 6, 7, 8, 9, 10], (seed) => ({
        seed,
        moves: [],
        thenExpert: negotiationExpert({ seed, randomActionRate: 0.7 }),
      })),
    expected: [
      { rewards: [0, 0.5], end: 'done' },
      { rewards: [0, 0.65], end: 'done' },
      { rewards: [0, 0, 0, 0.55], end: 'done' },
      { rewards: [0, 0, 0, 0, 0.45], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0.5], end: 'done' },
      { rewards: [0, 0, 0.5], end: 'done' },
    ],
  },
]);
