import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { purchaseReward, type Goal, type Product } from './catalog.ts';
import { makeWebShop, type WebShopData, type WebShopPrivileged } from './env.ts';
import { nextShopAction, webShopExpert } from './expert.ts';
import { startShopServer } from './server.ts';

envContract('webshop', () => makeWebShop({ formatPenalty: 0.1 }), {
  makeExpert: webShopExpert,
  maxObservationBytes: 1024,
  invalidActions: [
    '<answer>buy it</answer>',
    '<answer>click[Buy Now]</answer>',
    '<answer>click[nothing]</answer>',
    '<answer>search[]</answer>',
  ],
  invalidActionReward: -0.1,
});

test('purchase reward: category gate, attribute, option and price matches, by hand', () => {
  const product: Product = {
    id: 'B0AAAAAA',
    title: 'x',
    category: 'mug',
    attributes: ['ceramic', 'insulated'],
    options: { color: ['blue', 'white'], size: ['12 oz'] },
    price: 12,
  };
  const goal: Goal = {
    productId: 'B0AAAAAA',
    category: 'mug',
    attributes: ['ceramic', 'dishwasher safe'],
    options: { color: 'blue', size: '12 oz' },
    maxPrice: 10,
    instruction: '',
  };
  // attributes 1/2, options 1/2 (white chosen), price over the bound: (1 + 1 + 0) / (2 + 2 + 1)
  assert.equal(purchaseReward(goal, product, { color: 'white', size: '12 oz' }), 2 / 5);
  assert.equal(purchaseReward({ ...goal, maxPrice: 20 }, product, { color: 'blue', size: '12 oz' }), 4 / 5);
  assert.equal(purchaseReward(goal, { ...product, category: 'lamp' }, { color: 'blue', size: '12 oz' }), 0);
});

test('web shop expert buys the exact item on 50/50 test goals; random clicking never does', async () => {
  const env = makeWebShop();
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of splitSeeds('test', 50)) {
    if ((await playEpisode(env, webShopExpert({ seed }), seed)).success) expertWins++;
    if ((await playEpisode(env, webShopExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 50);
  assert.equal(randomWins, 0);
});

const server = await startShopServer(makeWebShop().shop);
after(() => server.close());

const decodeEntities = (text: string): string =>
  text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
const anchors = (html: string): Map<string, string> =>
  new Map(
    [...html.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map(([, href = '', label = '']) => [
      decodeEntities(label),
      decodeEntities(href),
    ]),
  );

test('the same pages as real HTML over HTTP: same clickables, same path, same reward', async () => {
  for (const seed of splitSeeds('test', 5)) {
    const env = makeWebShop();
    let observation = await env.reset({ seed });
    const { goal } = observation.privileged as WebShopPrivileged;
    const session = server.createSession(goal);
    let html = await (await fetch(session.url)).text();
    assert.match(html, /<form action="\/s\/s\d+\/search" method="get" role="search">/);
    for (let turn = 0; turn < 15; turn++) {
      const data = observation.data as WebShopData;
      const links = anchors(html);
      assert.deepEqual([...links.keys()].sort(), [...data.clickables].sort(), `page ${data.page.kind}`);
      const action = nextShopAction(goal, data.page, data.clickables);
      const result = await env.step({ text: `<answer>${action}</answer>` });
      const href = action.startsWith('search[')
        ? `/s/${session.id}/search?q=${encodeURIComponent(action.slice(7, -1))}`
        : links.get(action.slice(6, -1))!;
      html = await (await fetch(server.origin + href)).text();
      observation = result.observation;
      if (result.done) break;
    }
    assert.match(html, /Thank you for shopping with us! Reward: 1\.00/);
    assert.equal(server.session(session.id)!.reward, 1);
  }
  assert.equal((await fetch(`${server.origin}/s/nope/`)).status, 404);
});
