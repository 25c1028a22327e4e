/** The web shop's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { pinRewards, playScript, playSeeds } from '../reward-pin.ts';
import { makeWebShop } from './env.ts';
import { webShopExpert } from './expert.ts';

const env = makeWebShop({ formatPenalty: 0.1 });

pinRewards('webshop', [
  {
    name: 'the expert, seeds 0-3',
    play: () => playSeeds(env, [0, 1, 2, 3], (seed) => ({ seed, moves: [], thenExpert: webShopExpert() })),
    expected: [
      { rewards: [0, 0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 1], end: 'done' },
    ],
  },
  {
    name: 'invalid turns, then the expert',
    play: () =>
      playScript(env, {
        seed: 4,
        moves: ['no tags', '<answer>click[Nothing]</answer>', '<answer>jump[x]</answer>'],
        thenExpert: webShopExpert(),
      }),
    expected: { rewards: [-0.1, -0.1, -0.1, 0, 0, 0, 0, 1], end: 'done' },
  },
  {
    name: 'random play (partial purchases, out of turns), seeds 5-12',
    play: () =>
      playSeeds(env, [5, 6, 7, 8, 9, 10, 11, 12], (seed) => ({
        seed,
        moves: [],
        thenExpert: webShopExpert({ seed, randomActionRate: 0.6 }),
      })),
    expected: [
      { rewards: [0, 0, 0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 1], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'truncated' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'truncated' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0.6666666666666666], end: 'done' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'truncated' },
      { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'truncated' },
      { rewards: [0, 0, 0, 0, 0, 0, 0.8333333333333334], end: 'done' },
    ],
  },
]);
