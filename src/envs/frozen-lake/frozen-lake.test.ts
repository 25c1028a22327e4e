import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../core/index.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { makeFrozenLake, type FrozenLakeData } from './env.ts';
import { frozenLakeExpert } from './expert.ts';
import { generateLakeMap } from './generator.ts';
import { parseLakeMap, shortestLakePath } from './grid.ts';

envContract('frozen-lake', () => makeFrozenLake({ formatPenalty: 0.1 }), {
  makeExpert: frozenLakeExpert,
  invalidActions: ['<answer>Jump</answer>', '<answer>Left || Up</answer>', '<tool_call>{"name": "x"}</tool_call>'],
  invalidActionReward: -0.1,
});

const handMade = ['P_O_', '_O__', '___G'];

test('frozen-lake renders RAGEN symbols on a hand-made map', async () => {
  const env = makeFrozenLake();
  assert.equal((await env.reset({ seed: 1, task: { map: handMade } })).text, 'P_O_\n_O__\n___G');
  let result = await env.step({ text: '<answer>right</answer>' });
  assert.equal(result.observation.text, '_PO_\n_O__\n___G');
  result = await env.step({ text: '<answer>3</answer>' }); // 3 = Right
  assert.equal(result.observation.text, '__X_\n_O__\n___G');
  assert.deepEqual([result.done, result.reward, result.info.success], [true, 0, false]);

  const multi = makeFrozenLake({ maxActionsPerTurn: 5 });
  await multi.reset({ seed: 1, task: { map: handMade } });
  result = await multi.step({
    text: '<think>go down then right</think><answer>Down || Down || Right || Right || Right</answer>',
  });
  assert.equal(result.observation.text, '__O_\n_O__\n___√');
  assert.deepEqual([result.done, result.reward, result.info.success], [true, 1, true]);
});

test('frozen-lake invalid action: short status line, grid unchanged, step counted', async () => {
  const env = makeFrozenLake({ maxSteps: 2 });
  await env.reset({ seed: 1, task: { map: handMade } });
  const result = await env.step({ text: '<answer>Jump</answer>' });
  assert.equal(
    result.observation.text,
    'P_O_\n_O__\n___G\ninvalid: unknown move "Jump"; allowed: Left, Down, Right, Up or 1-4',
  );
  assert.equal((result.observation.data as FrozenLakeData).stepsLeft, 1);
  const second = await env.step({ text: '<answer>Left</answer>' });
  assert.deepEqual([second.done, second.truncated, second.info.success], [false, true, false]);
});

test('frozen-lake generated maps are solvable within maxSteps and differ by seed', () => {
  const maps = new Set<string>();
  for (const seed of splitSeeds('train', 200)) {
    const map = generateLakeMap(new Rng(seed), { size: 4, holeProbability: 0.2, maxPathLength: 10 });
    const { cells, player } = parseLakeMap(map);
    const path = shortestLakePath(cells, player);
    assert.ok(path !== null && path.length >= 1 && path.length <= 10);
    maps.add(map.join('\n'));
  }
  assert.ok(maps.size > 150, `${maps.size} distinct maps`);
  const big = generateLakeMap(new Rng(3), { size: 8, holeProbability: 0.3, maxPathLength: 30 });
  assert.equal(big.length, 8);
});

test('frozen-lake expert solves 100% of 50 test tasks (non-slippery); random play does clearly worse', async () => {
  const env = makeFrozenLake();
  const seeds = splitSeeds('test', 50);
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of seeds) {
    if ((await playEpisode(env, frozenLakeExpert({ seed }), seed)).success) expertWins++;
    if ((await playEpisode(env, frozenLakeExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 50);
  assert.ok(randomWins < 20, `random won ${randomWins}/50`);
});

test('frozen-lake slippery: some moves slip sideways, the same seed slips the same way', async () => {
  const env = makeFrozenLake({ slippery: true, maxSteps: 100, size: 6 });
  const playDown = async (seed: number): Promise<string[]> => {
    await env.reset({ seed });
    const taken: string[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const result = await env.step({ text: '<answer>Down</answer>' });
      taken.push(...(result.info.moves as string[]));
      if (result.done) break;
    }
    return taken;
  };
  let slips = 0;
  let moves = 0;
  for (const seed of splitSeeds('validation', 20)) {
    const taken = await playDown(seed);
    assert.deepEqual(await playDown(seed), taken);
    moves += taken.length;
    slips += taken.filter((move) => move !== 'Down').length;
  }
  assert.ok(slips > 0 && slips < moves / 2, `${slips} slips in ${moves} moves`);
});
