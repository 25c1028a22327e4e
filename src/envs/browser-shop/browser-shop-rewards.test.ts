/** The browser shop's step rewards, pinned (issue 31: the values its named reward components must keep). */
import { after } from 'node:test';
import { pinRewards, playScript } from '../reward-pin.ts';
import { splitSeed } from '../split.ts';
import { openBrowserShop } from './browser.ts';
import { makeBrowserShop } from './env.ts';
import { browserShopExpert } from './expert.ts';

const resources = openBrowserShop({ catalogSeed: 3, catalogSize: 240, pageSize: 5 });
const env = makeBrowserShop({ formatPenalty: 0.1, maxTurns: 12 }, { resources });
after(async () => {
  await env.close();
  await (await resources).close();
});

pinRewards('browser-shop', [
  {
    name: 'invalid turns, then the expert',
    play: () =>
      playScript(env, {
        seed: splitSeed('test', 0),
        moves: ['no tags', '<answer>click[no such link]</answer>', '<answer>press[x]</answer>'],
        thenExpert: browserShopExpert(),
      }),
    expected: { rewards: [-0.1, -0.1, -0.1, 0, 0, 0, 0, 1], end: 'done' },
  },
  {
    name: 'random clicks until a purchase or out of turns',
    play: () =>
      playScript(env, {
        seed: splitSeed('test', 1),
        moves: [],
        thenExpert: browserShopExpert({ seed: 2, randomActionRate: 0.5 }),
      }),
    expected: { rewards: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], end: 'truncated' },
  },
]);
