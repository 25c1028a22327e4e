/**
 * `npm run bench:memory`: memory-recall (facts early, a question after distractors) with the policy
 * seeing a bounded history (`historyTurns`, default 0: only the current message, so the facts are
 * out of view at the question; a tool's result comes with the next message).
 * Two arms from the same model config and budget: **with memory tools** (memory_insert /
 * memory_search) and **without** (the same env, no tools). Each arm: SFT warm start on the scripted
 * expert's episodes (with tools it saves and searches; without, it can only answer "ok" and guess),
 * then GRPO; prints held-out test success (sampled and greedy) before and after RL as a markdown
 * table.
 *
 * Environment variables (defaults in brackets): BENCH_FACTS [2], BENCH_FILLER [3], BENCH_HISTORY [0],
 * BENCH_DEMOS [512], BENCH_SFT_STEPS [400], BENCH_ITERATIONS [30], BENCH_TASKS [8], BENCH_GROUP [8],
 * BENCH_TEST [100], BENCH_SAMPLES [2], BENCH_MAX_NEW_TOKENS [128], BENCH_SEED [0], BENCH_MODEL [default | tiny: a quick wiring
 * check, not a result].
 */
import { defaultTrainModel } from '../src/cli/model-setup.ts';
import { makeMemoryRecall } from '../src/envs/memory-recall/env.ts';
import { memoryRecallExpert } from '../src/envs/memory-recall/expert.ts';
import { TransformerModel } from '../src/model/model.ts';
import { rlConfigSchema, runRl } from '../src/train/rl.ts';
import { warmStart, warmStartConfigSchema } from '../src/train/warm-start.ts';
import { measureHeldOut } from './measure.ts';

const number = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const facts = number('BENCH_FACTS', 2);
const fillerTurns = number('BENCH_FILLER', 3);
const historyTurns = number('BENCH_HISTORY', 0);
const testEpisodes = number('BENCH_TEST', 100);
const samples = number('BENCH_SAMPLES', 2);
const seed = number('BENCH_SEED', 0);
const modelConfig =
  process.env.BENCH_MODEL === 'tiny'
    ? { vocabSize: 272, hiddenSize: 32, numLayers: 1, numHeads: 2, numKvHeads: 2, intermediateSize: 64, maxSeqLen: 1024 }
    : { ...defaultTrainModel, maxSeqLen: 1024 };
const maxTurns = 2 * (facts + fillerTurns + 1) + 4;
const percent = (x: number) => `${(x * 100).toFixed(1)}%`;
const rows: string[] = [];

for (const memoryTools of [true, false]) {
  const arm = memoryTools ? 'with memory tools' : 'without memory tools';
  const envOptions = { facts, fillerTurns, memoryTools };
  const env = () => makeMemoryRecall(envOptions);
  const rl = rlConfigSchema.parse({
    algo: 'grpo',
    iterations: number('BENCH_ITERATIONS', 30),
    tasksPerIteration: number('BENCH_TASKS', 8),
    groupSize: number('BENCH_GROUP', 8),
    maxTurns,
    maxNewTokens: number('BENCH_MAX_NEW_TOKENS', 128),
    historyTurns,
    learningRate: 5e-5,
    validateEvery: 0,
    validationEpisodes: testEpisodes,
    seed,
  });
  // In a child process from a saved checkpoint (bench/measure.ts): a fresh wasm heap.
  const measure = (model: TransformerModel) => measureHeldOut(model, { name: 'memory-recall', options: envOptions }, rl, samples);
  const started = performance.now();
  const model = await TransformerModel.create(modelConfig, { seed });
  const warmConfig = warmStartConfigSchema.parse({ demonstrations: number('BENCH_DEMOS', 512), sftSteps: number('BENCH_SFT_STEPS', 400), randomActionRate: 0.1 });
  await warmStart({
    model,
    env,
    expert: (s, randomActionRate) => memoryRecallExpert({ seed: s, randomActionRate }),
    config: warmConfig,
    maxTurns,
    historyTurns,
    maxNewTokens: rl.maxNewTokens,
    instructions: false,
    onProgress: (p) => {
      if (p.step % 50 === 0) console.error(`  ${arm} sft ${p.step}/${warmConfig.sftSteps}: loss ${p.loss.toFixed(4)}`);
    },
  });
  const before = await measure(model);
  const reference = await TransformerModel.fromParams(model.config, await model.hostParams());
  await runRl({
    model,
    reference,
    env,
    config: rl,
    onIteration: (m) => console.error(`  ${arm} rl ${m.iteration}/${rl.iterations}: success ${m.success.toFixed(2)} invalid ${m.invalidActionRate.toFixed(2)} (${m.seconds.toFixed(1)} s)`),
  });
  const after = await measure(model);
  const minutes = (performance.now() - started) / 60_000;
  rows.push(`| ${arm} | ${percent(before.sampled)} | ${percent(after.sampled)} | ${percent(before.greedy)} → ${percent(after.greedy)} | ${minutes.toFixed(1)} |`);
  console.error(rows.at(-1));
}

console.log(`\nmemory-recall: ${facts} facts, ${fillerTurns} distractors, history ${historyTurns} turns; held-out test seeds ${testEpisodes}, sampled = temperature 1 × ${samples}; seed ${seed}; model ${JSON.stringify(modelConfig)}`);
console.log('\n| arm | SFT start (sampled) | after GRPO (sampled) | greedy before → after | minutes |');
console.log('|---|---:|---:|---:|---:|');
for (const row of rows) console.log(row);
