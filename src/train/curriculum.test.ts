import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Trajectory } from '../core/types.ts';
import { rolloutStats } from '../rollout/index.ts';
import { Curriculum, curriculumFor } from './curriculum.ts';
import { collectIteration } from './rl-collect.ts';
import { runRl } from './rl.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';

function episode(seed: number, success: boolean, index = 0): Trajectory {
  return {
    tokens: [1, 2],
    lossMask: [0, 1],
    logprobs: [0, -1],
    tokenRewards: [0, success ? 1 : 0],
    turns: [],
    totalReward: success ? 1 : 0,
    success,
    groupId: `${seed}:${index}`.split(':')[0] ?? '',
    seed,
    truncated: false,
  };
}

const options = { runSeed: 3, poolSize: 20, groupSize: 4, floor: 0.05 };

test('weight = max(floor, 1 − p^G − (1 − p)^G) with p the Beta(1, 1) posterior mean of success', () => {
  const curriculum = new Curriculum(options);
  const [seed = -1, other = -1] = curriculum.sample(1, 0, 2);
  assert.equal(curriculum.weight(seed), 1 - 2 * 0.5 ** 4); // unseen: p = ½
  curriculum.observe(Array.from({ length: 8 }, () => episode(seed, true)));
  assert.ok(Math.abs(curriculum.weight(seed) - (1 - 0.9 ** 4 - 0.1 ** 4)) < 1e-12); // p = 9/10
  curriculum.observe(Array.from({ length: 100 }, () => episode(other, false)));
  assert.equal(curriculum.weight(other), 0.05); // p = 1/102: the floor
});

test('sample: deterministic per (run, iteration, batch), distinct, never an excluded task, all from the pool', () => {
  const a = new Curriculum(options);
  const b = new Curriculum(options);
  assert.deepEqual(a.sample(4, 1, 6), b.sample(4, 1, 6));
  assert.notDeepEqual(a.sample(4, 0, 6), a.sample(5, 0, 6));
  const first = a.sample(2, 0, 6);
  assert.equal(new Set(first).size, 6);
  const refill = a.sample(2, 1, 6, new Set(first));
  assert.ok(refill.every((seed) => !first.includes(seed)));
  const pool = new Set(a.sample(1, 0, 20));
  assert.equal(pool.size, 20);
  assert.ok(a.sample(9, 0, 50).length === 20 && a.sample(9, 0, 50).every((seed) => pool.has(seed)));
});

test('tasks estimated solved or unsolved are drawn less than uncertain ones', () => {
  const curriculum = new Curriculum(options);
  const pool = curriculum.sample(1, 0, 20);
  // 10 tasks seen 16 times each: 5 always solved, 5 never; 10 unseen.
  pool.slice(0, 5).forEach((seed) => {
    curriculum.observe(Array.from({ length: 16 }, () => episode(seed, true)));
  });
  pool.slice(5, 10).forEach((seed) => {
    curriculum.observe(Array.from({ length: 16 }, () => episode(seed, false)));
  });
  const draws = new Map<number, number>();
  for (let iteration = 1; iteration <= 400; iteration++) {
    for (const seed of curriculum.sample(iteration, 0, 4)) draws.set(seed, (draws.get(seed) ?? 0) + 1);
  }
  const mean = (seeds: number[]) => seeds.reduce((sum, s) => sum + (draws.get(s) ?? 0), 0) / seeds.length;
  const settled = mean(pool.slice(0, 10));
  const uncertain = mean(pool.slice(10));
  // Seen 16 times: p = 17/18 or 1/18, weight 0.205 against 0.875 unseen.
  assert.ok(uncertain > 3 * settled, `uncertain tasks drawn ${uncertain} times each, settled ${settled}`);
  assert.ok(settled > 0, 'the floor keeps settled tasks reachable');
  const metrics = curriculum.metrics();
  assert.equal(metrics['curriculum/tasksSeen'], 10);
  assert.equal(metrics['curriculum/solvedShare'], 5 / 20);
  assert.equal(metrics['curriculum/unsolvedShare'], 5 / 20);
});

test('state round trip: a resumed curriculum draws what the original would have', () => {
  const original = new Curriculum(options);
  original.observe([episode(at0(original), true), episode(at0(original), false)]);
  const resumed = curriculumFor(
    { curriculumPool: 20, curriculumFloor: 0.05, tasksPerIteration: 4, groupSize: 4, seed: 3 },
    JSON.parse(JSON.stringify(original.state())),
  );
  assert.deepEqual(resumed?.sample(7, 0, 5), original.sample(7, 0, 5));
  assert.deepEqual(resumed?.state(), original.state());
  assert.throws(
    () =>
      curriculumFor(
        { curriculumPool: 2, curriculumFloor: 0.05, tasksPerIteration: 4, groupSize: 4, seed: 3 },
        undefined,
      ),
    /smaller than tasksPerIteration/,
  );
});

function at0(curriculum: Curriculum): number {
  return curriculum.sample(1, 0, 1)[0] ?? -1;
}

test('collectIteration draws its tasks, refills included, from the curriculum and teaches it every episode', async () => {
  const curriculum = new Curriculum({ ...options, poolSize: 6 });
  const asked: number[][] = [];
  const collected = await collectIteration({
    generate: async (seeds) => {
      asked.push(seeds);
      // Every group uniform: dynamic sampling keeps refilling until the pool runs dry.
      const trajectories = seeds.flatMap((seed) => [0, 1].map(() => episode(seed, seed % 2 === 0)));
      return { trajectories, stats: rolloutStats(trajectories, 0), seconds: 0 };
    },
    runSeed: 3,
    iteration: 1,
    tasksPerIteration: 4,
    dynamicSampling: true,
    maxGenerationBatches: 5,
    curriculum,
  });
  assert.deepEqual(
    asked.map((seeds) => seeds.length),
    [4, 2],
  );
  assert.equal(new Set(asked.flat()).size, 6);
  assert.equal(collected.generationBatches, 2);
  assert.equal(curriculum.metrics()['curriculum/tasksSeen'], 6);
});

test('runRl with curriculumPool: tasks come from the pool, curriculum/* metrics and the resume state carry the estimates', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 16 });
  const pool = new Set(new Curriculum({ runSeed: 0, poolSize: 6, groupSize: 4, floor: 0.05 }).sample(1, 0, 6));
  const seen: number[] = [];
  const states: unknown[] = [];
  const { history } = await runRl({
    policy,
    env: makeBanditEnv,
    config: {
      iterations: 2,
      tasksPerIteration: 3,
      groupSize: 4,
      maxTurns: 1,
      maxNewTokens: 24,
      validateEvery: 0,
      validationEpisodes: 2,
      klCoef: 0,
      curriculumPool: 6,
    },
    onTrajectories: (trajectories) => {
      seen.push(...trajectories.map((t) => t.seed));
    },
    onIteration: (_metrics, state) => {
      states.push(state.curriculum);
    },
  });
  assert.ok(seen.length > 0 && seen.every((seed) => pool.has(seed)));
  const last = history.at(-1);
  assert.ok(last?.scalars !== undefined && (last.scalars['curriculum/tasksSeen'] ?? 0) > 0);
  const episodes = (states.at(-1) as { tasks: [number, number, number][] }).tasks.reduce((n, [, e]) => n + e, 0);
  assert.equal(episodes, seen.length);
});
