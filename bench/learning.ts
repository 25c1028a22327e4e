/**
 * `npm run bench:learning`: for FrozenLake, Sokoban and Calculator — SFT warm start on the scripted
 * expert (with random actions), then GRPO and PPO from that same start; prints held-out test
 * success before and after RL, wall time and tokens/s, as a markdown table.
 *
 * Success is measured two ways on the same held-out test seeds: **sampled** — the policy as it acts
 * and is trained (temperature 1, `BENCH_SAMPLES` episodes per seed) — and **greedy** (temperature
 * 0, one episode per seed). Δ is the sampled difference.
 *
 * Each environment runs with its training preset (src/train/env-presets.ts).
 *
 * Environment variables (defaults in brackets): BENCH_ENVS [frozen-lake,sokoban,calculator],
 * BENCH_ALGOS [grpo,ppo], BENCH_ITERATIONS [per env], BENCH_TEST [100], BENCH_SAMPLES [2],
 * BENCH_SEED [0], BENCH_CHECKPOINTS [none]: a folder where each warm start is saved as
 * `<env>-sft` (with its settings and minutes) and each RL result as `<env>-<algo>`;
 * a later run with the same folder reuses a saved warm start whose settings match, so a crash or a
 * stopped run in RL does not cost the warm start again.
 */
import { join } from 'node:path';
import { getEnvironment } from '../src/envs/index.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { rlConfigSchema, runRl, type IterationMetrics } from '../src/train/rl.ts';
import { trainingPresets } from '../src/train/env-presets.ts';
import { algorithmNameSchema, algorithmPresets } from '../src/train/algorithm-presets.ts';
import { saveCheckpoint } from '../src/model/checkpoint.ts';
import { withZeroValueHead } from '../src/model/config.ts';
import { measureHeldOut } from './measure.ts';
import { rewardMonitor } from '../src/rewards/monitor/index.ts';
import { warmStartedModel } from './warm-start-cache.ts';

const list = (name: string, fallback: string) => (process.env[name] ?? fallback).split(',').filter(Boolean);
const envs = list('BENCH_ENVS', 'frozen-lake,sokoban,calculator');
const algos = list('BENCH_ALGOS', 'grpo,ppo').map((a) => algorithmNameSchema.parse(a));
const testEpisodes = Number(process.env.BENCH_TEST ?? 100);
const samples = Number(process.env.BENCH_SAMPLES ?? 2);
const seed = Number(process.env.BENCH_SEED ?? 0);
const checkpoints = process.env.BENCH_CHECKPOINTS;
const rows: string[] = [];
const monitorLines: string[] = [];
const settings: string[] = [];
const percent = (x: number) => `${(x * 100).toFixed(1)}%`;

for (const name of envs) {
  const preset = trainingPresets[name];
  if (preset === undefined)
    throw new Error(`no training preset for ${name}; presets: ${Object.keys(trainingPresets).join(', ')}`);
  const descriptor = getEnvironment(name);
  const env = () => descriptor.make(preset.envOptions);
  const iterations = Number(process.env.BENCH_ITERATIONS ?? preset.rl.iterations ?? 20);
  const rl = rlConfigSchema.parse({
    historyTurns: 0,
    systemPrompt: false,
    seed,
    ...preset.rl,
    iterations,
    validateEvery: 0,
  });
  const evalConfig = { ...rl, validationEpisodes: testEpisodes };
  // Measured in a child process from a saved checkpoint (bench/measure.ts).
  const measure = (model: TransformerModel) =>
    measureHeldOut(model, { name, options: preset.envOptions }, evalConfig, samples);

  const { model, sftMinutes, warmConfig } = await warmStartedModel({ name, preset, rl, seed, checkpoints });
  const start = await model.hostParams();
  // Measured on every run, reused start or not: the held-out settings (BENCH_TEST, BENCH_SAMPLES) may differ.
  const before = await measure(model);
  console.error(
    `${name}: SFT start held-out success sampled ${percent(before.sampled)} greedy ${percent(before.greedy)}`,
  );
  settings.push(
    `${name} ${JSON.stringify(preset.envOptions)}: SFT ${warmConfig.sftSteps} steps × ${warmConfig.sftBatchSize} at lr ${warmConfig.sftLearningRate} on ${warmConfig.demonstrations} demonstrations ` +
      `(${warmConfig.randomActionRate * 100}% random actions); RL ${iterations} iterations × ${rl.tasksPerIteration} tasks × G ${rl.groupSize}, lr ${rl.learningRate}`,
  );
  for (const algo of algos) {
    const t0 = performance.now();
    const policy = algorithmPresets[algo].valueHead
      ? withZeroValueHead(model.config, start)
      : { config: model.config, params: start };
    const policyModel = await TransformerModel.fromParams(policy.config, policy.params);
    const reference = await TransformerModel.fromParams(model.config, start);
    const history: IterationMetrics[] = [];
    const fired: string[] = [];
    await runRl({
      policy: new BuiltinPolicy({ model: policyModel }),
      reference: new BuiltinPolicy({ model: reference }),
      env,
      config: { ...rl, algo },
      // The reward-hacking monitor watches every arm (mode warn); a healthy run leaves it silent.
      monitor: rewardMonitor({ config: { mode: 'warn' }, rewardSpec: env().rewardComponents }),
      onWarning: (warning) => {
        console.error(`  warning: ${warning.message}`);
        if (warning.kind === 'reward-hacking') fired.push(warning.message);
      },
      onIteration: (m) => {
        history.push(m);
        console.error(
          `  ${name}/${algo} ${m.iteration}/${iterations}: success ${m.success.toFixed(2)} invalid ${m.invalidActionRate.toFixed(2)} klToReference ${m.klToReference.toFixed(4)} (${m.seconds.toFixed(1)} s)`,
        );
      },
    });
    const rlMinutes = (performance.now() - t0) / 60_000;
    const after = await measure(policyModel);
    if (checkpoints !== undefined) {
      await saveCheckpoint(join(checkpoints, `${name}-${algo}`), {
        config: policyModel.config,
        params: await policyModel.hostParams(),
        extra: { rlMinutes, after },
      });
    }
    const mean = (key: 'rolloutTokensPerSecond' | 'trainTokensPerSecond') =>
      history.reduce((n, m) => n + m[key], 0) / Math.max(1, history.length);
    rows.push(
      `| ${name} | ${algo} | ${percent(before.sampled)} | ${percent(after.sampled)} | ${((after.sampled - before.sampled) * 100).toFixed(1)} | ` +
        `${percent(before.greedy)} → ${percent(after.greedy)} | ${sftMinutes.toFixed(1)} | ${rlMinutes.toFixed(1)} | ${mean('rolloutTokensPerSecond').toFixed(0)} | ${mean('trainTokensPerSecond').toFixed(0)} |`,
    );
    console.error(rows.at(-1));
    monitorLines.push(
      `- ${name}/${algo}: ${fired.length === 0 ? `silent over ${history.length} iterations` : `fired ${fired.length}×: ${fired.join('; ')}`}`,
    );
  }
}

console.log(
  `\nheld-out test seeds: ${testEpisodes}; sampled = temperature 1, ${samples} episodes per seed; seed ${seed}`,
);
for (const line of settings) console.log(`- ${line}`);
console.log(
  '\n| env | algo | SFT start (sampled) | after RL (sampled) | Δ (pp) | greedy before → after | SFT (min) | RL (min) | gen tok/s | train tok/s |',
);
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
console.log('\nreward-hacking monitor (mode warn):');
for (const line of monitorLines) console.log(line);
