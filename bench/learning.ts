/**
 * `npm run bench:learning`: for FrozenLake, Sokoban and Calculator — SFT warm start on the scripted
 * expert (with random actions), then GRPO and PPO from that same start; prints held-out test
 * success before and after RL, wall time and tokens/s, as a markdown table.
 *
 * Environment variables (defaults in brackets): BENCH_ENVS [frozen-lake,sokoban,calculator],
 * BENCH_ALGOS [grpo,ppo], BENCH_ITERATIONS [20], BENCH_SFT_STEPS [150], BENCH_TEST [100],
 * BENCH_SEED [0].
 */
import { getEnvironment } from '../src/envs/index.ts';
import { TransformerModel } from '../src/model/model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { rlConfigSchema, runRl, validate, type IterationMetrics } from '../src/train/rl.ts';
import { warmStart, warmStartConfigSchema } from '../src/train/warm-start.ts';
import { algorithmNameSchema, algorithmPresets } from '../src/train/algorithm-presets.ts';
import { defaultTrainModel } from '../src/cli/model-setup.ts';

const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').filter(Boolean);
const envs = list('BENCH_ENVS', 'frozen-lake,sokoban,calculator');
const algos = list('BENCH_ALGOS', 'grpo,ppo').map((a) => algorithmNameSchema.parse(a));
const iterations = Number(process.env.BENCH_ITERATIONS ?? 20);
const sftSteps = Number(process.env.BENCH_SFT_STEPS ?? 150);
const testEpisodes = Number(process.env.BENCH_TEST ?? 100);
const seed = Number(process.env.BENCH_SEED ?? 0);

const rl = rlConfigSchema.parse({ iterations, historyTurns: 0, systemPrompt: false, validateEvery: 0, seed });
const evalConfig = { ...rl, validationEpisodes: testEpisodes };
const rows: string[] = [];

for (const name of envs) {
  const descriptor = getEnvironment(name);
  const env = () => descriptor.make({});
  const started = performance.now();
  const model = await TransformerModel.create({ ...defaultTrainModel, valueHead: false }, { seed });
  const warm = await warmStart({
    model,
    env,
    expert: (s, randomActionRate) => descriptor.expert({ seed: s, randomActionRate }),
    config: warmStartConfigSchema.parse({ sftSteps }),
    maxTurns: rl.maxTurns,
    historyTurns: 0,
    maxNewTokens: rl.maxNewTokens,
    instructions: false,
  });
  const start = await model.hostParams();
  const before = await validate(new BuiltinPolicy({ model }), env, evalConfig, 'test');
  const warmSeconds = (performance.now() - started) / 1000;
  console.error(`${name}: warm start loss ${warm.finalLoss.toFixed(3)}, held-out success ${(before * 100).toFixed(1)}% (${warmSeconds.toFixed(0)} s)`);
  for (const algo of algos) {
    const t0 = performance.now();
    const valueHead = algorithmPresets[algo].valueHead;
    const params = new Map(start);
    if (valueHead) {
      params.set('valueHead.w', { shape: [model.config.hiddenSize, 1], data: new Float32Array(model.config.hiddenSize) });
      params.set('valueHead.b', { shape: [1], data: new Float32Array(1) });
    }
    const policyModel = await TransformerModel.fromParams({ ...model.config, valueHead }, params);
    const reference = await TransformerModel.fromParams(model.config, start);
    const history: IterationMetrics[] = [];
    await runRl({
      model: policyModel,
      reference,
      env,
      config: { ...rl, algo },
      onIteration: (m) => {
        history.push(m);
        console.error(`  ${name}/${algo} ${m.iteration}/${iterations}: success ${m.success.toFixed(2)} invalid ${m.invalidActionRate.toFixed(2)} kl ${m.kl.toFixed(4)}`);
      },
    });
    const after = await validate(new BuiltinPolicy({ model: policyModel }), env, evalConfig, 'test');
    const seconds = warmSeconds + (performance.now() - t0) / 1000;
    const mean = (key: 'rolloutTokensPerSecond' | 'trainTokensPerSecond') => history.reduce((n, m) => n + m[key], 0) / Math.max(1, history.length);
    rows.push(
      `| ${name} | ${algo} | ${(before * 100).toFixed(1)}% | ${(after * 100).toFixed(1)}% | ${((after - before) * 100).toFixed(1)} | ` +
        `${(seconds / 60).toFixed(1)} | ${mean('rolloutTokensPerSecond').toFixed(0)} | ${mean('trainTokensPerSecond').toFixed(0)} |`,
    );
  }
}

console.log(`\nheld-out test success (${testEpisodes} episodes, greedy); SFT warm start ${sftSteps} steps; RL ${iterations} iterations × ${rl.tasksPerIteration} tasks × G ${rl.groupSize}; seed ${seed}\n`);
console.log('| env | algo | SFT start | after RL | Δ (pp) | wall (min) | gen tok/s | train tok/s |');
console.log('|---|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
