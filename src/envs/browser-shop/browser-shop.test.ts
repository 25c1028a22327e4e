import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeed, splitSeeds } from '../split.ts';
import { openBrowserShop } from './browser.ts';
import { makeBrowserShop, type BrowserShopData } from './env.ts';
import { browserShopExpert } from './expert.ts';

// one Chromium for the whole file
const resources = openBrowserShop({ catalogSeed: 3, catalogSize: 240, pageSize: 5 });
const envs: Array<ReturnType<typeof makeBrowserShop>> = [];
const make = (options = {}) => {
  const env = makeBrowserShop(options, { resources });
  envs.push(env);
  return env;
};
after(async () => {
  for (const env of envs) await env.close();
  await (await resources).close();
});

envContract('browser-shop', () => make({ formatPenalty: 0.1, maxTurns: 8 }), {
  makeExpert: browserShopExpert,
  seeds: splitSeeds('test', 1),
  maxObservationBytes: 1600,
  invalidActions: ['<answer>click[no such link]</answer>', '<answer>press[x]</answer>', '<answer>click[]</answer>'],
  invalidActionReward: -0.1,
});

test('the observation is the accessibility tree; type and click drive the real page', async () => {
  const env = make();
  const first = await env.reset({ seed: splitSeed('test', 0) });
  assert.match(
    first.text,
    /^- paragraph: "Instruction: i need .*"\n- search:\n {2}- textbox "Search"\n {2}- button "Search"$/,
  );
  const results = await env.step({ text: '<answer>type[backpack]</answer>' });
  assert.match(results.observation.text, /- link "Back to Search"/);
  assert.match(results.observation.text, /- link "Next >"/);
  assert.match(results.observation.text, /- listitem:\n\s+- link "B0[A-Z0-9]{6}"/);
  const data = results.observation.data as BrowserShopData;
  assert.deepEqual(data.page, { kind: 'results', query: 'backpack', page: 1 });
  const next = await env.step({ text: '<answer>click[Next >]</answer>' });
  assert.deepEqual((next.observation.data as BrowserShopData).page, { kind: 'results', query: 'backpack', page: 2 });
  const bad = await env.step({ text: '<answer>type[lamp]</answer>' });
  assert.deepEqual(
    [bad.info.invalidAction, bad.info.reason],
    [true, 'no search box on this page; click[Back to Search] first'],
  );
});

test('browser expert buys the exact item through Chromium on 2/2 goals; random clicking does not', async () => {
  const env = make({ maxTurns: 10 });
  let expertWins = 0;
  let randomWins = 0;
  for (const [i, seed] of splitSeeds('test', 2).entries()) {
    const episode = await playEpisode(env, browserShopExpert({ seed }), seed);
    if (episode.success) expertWins++;
    assert.equal(episode.last.reward, 1);
    if (i < 1 && (await playEpisode(env, browserShopExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 2);
  assert.equal(randomWins, 0);
});
