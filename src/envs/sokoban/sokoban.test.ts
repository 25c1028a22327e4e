import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Rng } from '../../core/index.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { makeSokoban } from './env.ts';
import { sokobanExpert } from './expert.ts';
import { generateSokobanMap } from './generator.ts';
import { parseSokobanMap, renderSokoban } from './grid.ts';
import { solveSokoban } from './solver.ts';

envContract('sokoban', () => makeSokoban({ formatPenalty: 0.1 }), {
  makeExpert: sokobanExpert,
  invalidActions: ['<answer>Push</answer>', '<answer>Up || Up</answer>'],
  // The move's −0.1 plus the format penalty: an invalid turn never scores better than a move.
  invalidActionReward: -0.2,
});

// Player left of a box, target right of it; a second target already holds a box.
const handMade = ['######', '#P_XO#', '#_#__#', '#___√#', '######'];

test('sokoban renders RAGEN symbols and scores moves like RAGEN on a hand-made map', async () => {
  const env = makeSokoban({ maxActionsPerTurn: 3 });
  assert.equal((await env.reset({ seed: 0, task: { map: handMade } })).text, handMade.join('\n'));
  let result = await env.step({ text: '<answer>Right</answer>' });
  assert.equal(result.observation.text, '######\n#_PXO#\n#_#__#\n#___√#\n######');
  assert.ok(Math.abs(result.reward - -0.1) < 1e-9);
  result = await env.step({ text: '<answer>up || 4</answer>' }); // bump the wall, then push
  assert.equal(result.observation.text, '######\n#__P√#\n#_#__#\n#___√#\n######');
  assert.ok(Math.abs(result.reward - (-0.2 + 1 + 10)) < 1e-9);
  assert.deepEqual([result.done, result.info.success], [true, true]);
});

test('sokoban: pushing a box off a target costs 1, player on a target renders S', async () => {
  const env = makeSokoban();
  await env.reset({ seed: 0, task: { map: ['#####', '#P√O#', '#_X_#', '#####'] } });
  const result = await env.step({ text: '<answer>Right</answer>' });
  assert.equal(result.observation.text, '#####\n#_S√#\n#_X_#\n#####');
  assert.ok(Math.abs(result.reward - (-0.1 - 1 + 1)) < 1e-9);
});

test('sokoban solver finds a shortest solution; parse/render round-trips', () => {
  const { room, position } = parseSokobanMap(handMade);
  assert.deepEqual(renderSokoban(room, position), handMade);
  assert.deepEqual(solveSokoban(room, position), [3, 3]);
  const stuck = parseSokobanMap(['#####', '#X_O#', '#P__#', '#####']);
  assert.equal(solveSokoban(stuck.room, stuck.position), null);
});

test('sokoban generated puzzles: unsolved, solvable within maxSteps, varied', () => {
  const maps = new Set<string>();
  const lengths = new Set<number>();
  for (const seed of splitSeeds('train', 100)) {
    const map = generateSokobanMap(new Rng(seed), {
      width: 6,
      height: 6,
      numBoxes: 1,
      floorFraction: 0.75,
      maxReverseMoves: 20,
      maxSolutionLength: 10,
    });
    const { room, position } = parseSokobanMap(map);
    const solution = solveSokoban(room, position);
    assert.ok(solution !== null && solution.length >= 1 && solution.length <= 10, map.join('\n'));
    maps.add(map.join('\n'));
    lengths.add(solution.length);
  }
  assert.ok(maps.size > 90 && lengths.size >= 4, `${maps.size} maps, ${lengths.size} solution lengths`);
  const large = generateSokobanMap(new Rng(1), {
    width: 8,
    height: 8,
    numBoxes: 2,
    floorFraction: 0.75,
    maxReverseMoves: 20,
    maxSolutionLength: 20,
  });
  assert.equal(
    large
      .join('')
      .split('')
      .filter((s) => s === 'X' || s === '√').length,
    2,
  );
});

test('sokoban expert solves 100% of 50 test tasks within maxSteps; random play does clearly worse', async () => {
  const env = makeSokoban();
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of splitSeeds('test', 50)) {
    if ((await playEpisode(env, sokobanExpert({ seed }), seed)).success) expertWins++;
    if ((await playEpisode(env, sokobanExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 50);
  assert.ok(randomWins < 12, `random won ${randomWins}/50`);
});

test('sokoban expert on an unsolvable map plays varied moves, not one fixed fallback', () => {
  // The box sits in a corner off the target: no push can ever move it.
  const stuck = ['#####', '#X__#', '#_P_#', '#__O#', '#####'];
  const expert = sokobanExpert({ seed: 3 });
  const moves = new Set(
    Array.from({ length: 40 }, () => expert.act({ text: stuck.join('\n'), data: { map: stuck, stepsLeft: 5 } })),
  );
  assert.ok(moves.size >= 3, `moves: ${[...moves].join(' ')}`);
});
