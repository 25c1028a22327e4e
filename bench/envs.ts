/**
 * `npm run bench:envs`: per environment — env steps per second (the scripted expert playing, env
 * time included: sandboxes, MCP server, browser), success of the scripted expert and of a random
 * policy (the expert with randomActionRate 1) on held-out test seeds, and held-out success of the
 * built-in model after a short RL run (GRPO from scratch, no warm start: a few iterations of a
 * tiny model — expect ~0; this measures that the loop runs on every env, not that it learns).
 * Prints a markdown table on stdout, progress on stderr.
 *
 * Environment variables (defaults in brackets): BENCH_ENVS [all], BENCH_EPISODES [20; 5 for
 * browser-shop], BENCH_RL_ITERATIONS [2], BENCH_SEED [0].
 */
import type { Env } from '../src/core/index.ts';
import { makeAbsoluteZero } from '../src/envs/absolute-zero/env.ts';
import { openBrowserShop } from '../src/envs/browser-shop/browser.ts';
import { makeBrowserShop } from '../src/envs/browser-shop/env.ts';
import { environmentNames, getEnvironment, playEpisode, splitSeeds } from '../src/envs/index.ts';
import { makeMcpFiles, openFilesWorkspace } from '../src/envs/mcp/files-env.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { rlConfigSchema, runRl, validate } from '../src/train/rl.ts';
import { policySolver } from '../src/train/self-play.ts';
import { at } from '../src/core/indexing.ts';

const names = (process.env.BENCH_ENVS ?? environmentNames().join(',')).split(',').filter(Boolean);
const baseEpisodes = Number(process.env.BENCH_EPISODES ?? 20);
const rlIterations = Number(process.env.BENCH_RL_ITERATIONS ?? 2);
const seed = Number(process.env.BENCH_SEED ?? 0);
const tinyModel = {
  vocabSize: 272,
  hiddenSize: 64,
  numLayers: 2,
  numHeads: 2,
  numKvHeads: 1,
  intermediateSize: 128,
  maxSeqLen: 512,
};
const rlConfig = {
  algo: 'grpo' as const,
  iterations: rlIterations,
  tasksPerIteration: 4,
  groupSize: 4,
  maxTurns: 4,
  maxNewTokens: 48,
  validateEvery: 0,
  validationEpisodes: 1,
  seed,
};

/** How to make the env for the bench (shared servers for the envs that start one) and how to stop it. */
async function setup(name: string, model: TransformerModel): Promise<{ make: () => Env; close: () => Promise<void> }> {
  if (name === 'mcp-files') {
    const workspace = openFilesWorkspace({ workspaceSeed: 11, noteCount: 24 });
    return { make: () => makeMcpFiles({}, { workspace }), close: async () => (await workspace).close() };
  }
  if (name === 'browser-shop') {
    const resources = openBrowserShop({ catalogSeed: 3, catalogSize: 240, pageSize: 5 });
    const envs: ReturnType<typeof makeBrowserShop>[] = [];
    const make = () => {
      const env = makeBrowserShop({}, { resources });
      envs.push(env);
      return env;
    };
    return {
      make,
      close: async () => {
        for (const env of envs) await env.close();
        await (await resources).close();
      },
    };
  }
  if (name === 'absolute-zero') {
    const solver = policySolver(new BuiltinPolicy({ model }), { maxNewTokens: 16 });
    return { make: () => makeAbsoluteZero({}, { solver }), close: async () => {} };
  }
  const descriptor = getEnvironment(name);
  return { make: () => descriptor.make({}), close: async () => {} };
}

const rows: string[] = [];
const started = performance.now();
for (const name of names) {
  const descriptor = getEnvironment(name);
  const episodes = name === 'browser-shop' ? Math.min(5, baseEpisodes) : baseEpisodes;
  const seeds = splitSeeds('test', episodes);
  const model = await TransformerModel.create(tinyModel, { seed });
  const reference = await TransformerModel.fromParams(model.config, await model.hostParams());
  const { make, close } = await setup(name, model);
  try {
    const env = make();
    let steps = 0;
    let expertWins = 0;
    const t0 = performance.now();
    for (const s of seeds) {
      const episode = await playEpisode(env, descriptor.expert({ seed: s }), s);
      steps += episode.turns;
      if (episode.success) expertWins++;
    }
    const stepsPerSecond = steps / ((performance.now() - t0) / 1000);
    let randomWins = 0;
    for (const s of seeds)
      if ((await playEpisode(env, descriptor.expert({ seed: s, randomActionRate: 1 }), s)).success) randomWins++;
    const t1 = performance.now();
    await runRl({
      policy: new BuiltinPolicy({ model }),
      reference: new BuiltinPolicy({ model: reference }),
      env: make,
      config: rlConfig,
      onIteration: (m) =>
        console.error(
          `  ${name} RL ${m.iteration}/${rlIterations}: reward ${m.reward.toFixed(3)} success ${m.success.toFixed(2)} invalid ${m.invalidActionRate.toFixed(2)}`,
        ),
    });
    const after = await validate(
      new BuiltinPolicy({ model }),
      make,
      { ...rlConfigSchema.parse(rlConfig), validationEpisodes: episodes, historyTurns: 'all', systemPrompt: false },
      'test',
    );
    const rlSeconds = (performance.now() - t1) / 1000;
    const percent = (wins: number) => `${((wins / episodes) * 100).toFixed(0)}%`;
    rows.push(
      `| ${name} | ${stepsPerSecond.toFixed(1)} | ${percent(expertWins)} | ${percent(randomWins)} | ${(after * 100).toFixed(0)}% | ${episodes} | ${rlSeconds.toFixed(0)} |`,
    );
    console.error(`${name}: ${rows.at(-1)}`);
  } catch (error) {
    rows.push(
      `| ${name} | failed: ${at((error instanceof Error ? error.message : String(error)).split('\n'), 0).slice(0, 80)} | | | | ${episodes} | |`,
    );
    console.error(error);
  } finally {
    await close();
  }
}

console.log(
  `\nheld-out test seeds; built-in model: ${tinyModel.numLayers} layers × ${tinyModel.hiddenSize} wide, from scratch, GRPO ${rlIterations} iterations × ${rlConfig.tasksPerIteration} tasks × G ${rlConfig.groupSize}, then greedy; total ${((performance.now() - started) / 60000).toFixed(1)} min\n`,
);
console.log(
  '| env | steps/s (expert) | expert success | random success | built-in after RL | episodes | RL + eval (s) |',
);
console.log('|---|---:|---:|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
