/**
 * `npm run bench:curriculum`: the curriculum sampler (src/train/curriculum.ts) against fresh tasks,
 * same env, warm start, algorithm and budget. Both arms start from the env's SFT warm start (its
 * training preset; reused from BENCH_CHECKPOINTS when saved by bench:learning with the same
 * settings) and print, per arm: groups generated, the share of them that were uniform (every
 * episode the same reward: zero GRPO advantage, nothing learned), episodes generated per
 * non-uniform group, held-out test success after RL (sampled and greedy) and minutes.
 *
 * Env: BENCH_ENV [frozen-lake], BENCH_ALGO [grpo], BENCH_ITERATIONS [20], BENCH_POOL [64: the
 * curriculum arm's pool], BENCH_TEST [100], BENCH_SAMPLES [2], BENCH_SEED [0], BENCH_CHECKPOINTS.
 */
import { getEnvironment } from '../src/envs/index.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { rlConfigSchema, runRl } from '../src/train/rl.ts';
import { trainingPresets } from '../src/train/env-presets.ts';
import { algorithmNameSchema } from '../src/train/algorithm-presets.ts';
import type { Trajectory } from '../src/core/types.ts';
import { measureHeldOut } from './measure.ts';
import { warmStartedModel } from './warm-start-cache.ts';

const name = process.env.BENCH_ENV ?? 'frozen-lake';
const algo = algorithmNameSchema.parse(process.env.BENCH_ALGO ?? 'grpo');
const pool = Number(process.env.BENCH_POOL ?? 64);
const testEpisodes = Number(process.env.BENCH_TEST ?? 100);
const samples = Number(process.env.BENCH_SAMPLES ?? 2);
const seed = Number(process.env.BENCH_SEED ?? 0);
const preset = trainingPresets[name];
if (preset === undefined)
  throw new Error(`no training preset for ${name}; presets: ${Object.keys(trainingPresets).join(', ')}`);
const descriptor = getEnvironment(name);
const env = () => descriptor.make(preset.envOptions);
const iterations = Number(process.env.BENCH_ITERATIONS ?? 20);
const rl = rlConfigSchema.parse({
  historyTurns: 0,
  systemPrompt: false,
  seed,
  ...preset.rl,
  iterations,
  validateEvery: 0,
  algo,
});
const percent = (x: number) => `${(x * 100).toFixed(1)}%`;

const { model, sftMinutes } = await warmStartedModel({
  name,
  preset,
  rl,
  seed,
  checkpoints: process.env.BENCH_CHECKPOINTS,
});
const start = await model.hostParams();
const measure = (m: TransformerModel) =>
  measureHeldOut(m, { name, options: preset.envOptions }, { ...rl, validationEpisodes: testEpisodes }, samples);
const before = await measure(model);
console.error(
  `${name}: SFT start (${sftMinutes.toFixed(1)} min) sampled ${percent(before.sampled)} greedy ${percent(before.greedy)}`,
);

/** Groups of a batch, and how many were uniform (all rewards equal). */
function groupCounts(trajectories: readonly Trajectory[]): { groups: number; uniform: number } {
  const rewards = new Map<string, number[]>();
  for (const t of trajectories) rewards.set(t.groupId, [...(rewards.get(t.groupId) ?? []), t.totalReward]);
  const uniform = [...rewards.values()].filter((r) => r.every((x) => x === r[0])).length;
  return { groups: rewards.size, uniform };
}

const rows: string[] = [];
for (const curriculumPool of [0, pool]) {
  const arm = curriculumPool === 0 ? 'fresh tasks' : `curriculum, pool ${curriculumPool}`;
  const policyModel = await TransformerModel.fromParams(model.config, start);
  const reference = await TransformerModel.fromParams(model.config, start);
  let groups = 0;
  let uniform = 0;
  let episodes = 0;
  const t0 = performance.now();
  await runRl({
    policy: new BuiltinPolicy({ model: policyModel }),
    reference: new BuiltinPolicy({ model: reference }),
    env,
    config: { ...rl, curriculumPool },
    onTrajectories: (trajectories) => {
      const counts = groupCounts(trajectories);
      groups += counts.groups;
      uniform += counts.uniform;
      episodes += trajectories.length;
    },
    onIteration: (m) => {
      console.error(
        `  ${arm} ${m.iteration}/${iterations}: success ${m.success.toFixed(2)} (${m.seconds.toFixed(1)} s)`,
      );
    },
  });
  const minutes = (performance.now() - t0) / 60_000;
  const after = await measure(policyModel);
  const perVaried = episodes / Math.max(1, groups - uniform);
  rows.push(
    `| ${arm} | ${groups} | ${percent(uniform / groups)} | ${perVaried.toFixed(1)} | ${percent(before.sampled)} → ${percent(after.sampled)} | ${percent(before.greedy)} → ${percent(after.greedy)} | ${minutes.toFixed(1)} |`,
  );
  console.error(rows.at(-1));
}

console.log(
  `\n${name} ${JSON.stringify(preset.envOptions)}, ${algo}, ${iterations} iterations × ${rl.tasksPerIteration} tasks × G ${rl.groupSize}, seed ${seed}; held-out: ${testEpisodes} test seeds, sampled ${samples} per seed`,
);
console.log(
  '\n| arm | groups | uniform groups | episodes per varied group | held-out sampled | held-out greedy | RL (min) |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
