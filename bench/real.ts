/**
 * `npm run bench:real`: pure RL — no SFT warm start, no scripted expert — of SmolLM2-135M-Instruct
 * (the pulled Q4_1 GGUF, dequantized) with LoRA rank 16 on all seven projections, on the
 * calculator task in the model's own conventions (bench/real/task.ts: a tool call in SmolLM2's
 * `<tool_call>[…]` format whose expression evaluates to the answer, then the right number, scores 1).
 *
 * It runs the product's RL path — `runRl` (GRPO) over the rollout in the model's chat format, the
 * same code `agentrl train --model smollm2-135m-instruct --lora-rank 16` runs — with sampling and
 * scoring and the LoRA train step on onnxruntime (`BuiltinPolicy({ inference: 'onnx', training: 'onnx' })`). Held-out success on the env's
 * test split (src/envs/split.ts) before and after, greedy and sampled; greedy validation-split
 * success at intervals; stops at a wall-clock budget. Prints the curve, each iteration's time split
 * (generation / scoring / training / other), the peak RSS and a README row. Fixed seeds.
 *
 * Env: BENCH_REAL_MINUTES (default 45: the budget, evaluations included), BENCH_REAL_TEST (test
 * seeds, default 64), BENCH_REAL_VALIDATION (validation seeds per interval, default 16),
 * BENCH_REAL_VALIDATE_EVERY (iterations, default 5), BENCH_REAL_TASKS / BENCH_REAL_GROUP (tasks ×
 * episodes per iteration, default 4 × 8), BENCH_REAL_MINIBATCH (episodes per optimizer step, default 8:
 * four steps an iteration), BENCH_REAL_LR (default 1e-3), BENCH_REAL_TEMPERATURE (the
 * rollout's sampling temperature, default 1; the sampled held-out test samples at it too).
 */
import { makeCalculator } from '../src/envs/calculator/env.ts';
import { loadModelCheckpoint } from '../src/model/model-sources.ts';
import { TransformerModel } from '../src/model/model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { runRl, validate, type IterationMetrics, type RlConfigInput } from '../src/train/rl.ts';
import { withPhaseTimes } from './real/phase-times.ts';
import { realTaskName, realTaskOptions } from './real/task.ts';

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const budgetSeconds = setting('BENCH_REAL_MINUTES', 45) * 60;
const testEpisodes = setting('BENCH_REAL_TEST', 64);
const lora = {
  rank: 16,
  alpha: 32,
  targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const,
};
const config: RlConfigInput = {
  algo: 'grpo',
  klCoef: 0,
  iterations: 10_000, // the wall-clock budget stops the run
  tasksPerIteration: setting('BENCH_REAL_TASKS', 4),
  groupSize: setting('BENCH_REAL_GROUP', 8),
  minibatchSize: setting('BENCH_REAL_MINIBATCH', 8),
  maxTurns: 3,
  maxNewTokens: 48,
  temperature: setting('BENCH_REAL_TEMPERATURE', 1),
  systemPrompt: true,
  learningRate: setting('BENCH_REAL_LR', 1e-3),
  validateEvery: setting('BENCH_REAL_VALIDATE_EVERY', 5),
  validationEpisodes: setting('BENCH_REAL_VALIDATION', 16),
  seed: 0,
};

const started = performance.now();
const elapsed = (): number => (performance.now() - started) / 1000;
const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;
const percent = (rate: number): string => `${(rate * 100).toFixed(1)}%`;

async function makePolicy() {
  const checkpoint = await loadModelCheckpoint('smollm2-135m-instruct');
  if (checkpoint.chatFormat === undefined) throw new Error('smollm2-135m-instruct: no chat format in the pulled model');
  const model = await TransformerModel.fromParams({ ...checkpoint.config, maxSeqLen: 512 }, checkpoint.params, {
    seed: 0,
    lora: { ...lora, targetModules: [...lora.targetModules] },
  });
  return withPhaseTimes(
    new BuiltinPolicy({ model, chatFormat: checkpoint.chatFormat, inference: 'onnx', training: 'onnx' }),
  );
}

async function heldOut(
  policy: BuiltinPolicy,
  env: () => ReturnType<typeof makeCalculator>,
  label: string,
): Promise<{ greedy: number; sampled: number; seconds: number }> {
  const t0 = performance.now();
  const testConfig = { ...config, validationEpisodes: testEpisodes } as Parameters<typeof validate>[2];
  const greedy = await validate(policy, env, testConfig, 'test');
  const sampled = await validate(policy, env, testConfig, 'test', { samples: 1, seed: 12_345 });
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `held-out test ${label}: greedy ${percent(greedy)}, sampled (T=${config.temperature}) ${percent(sampled)} on ${testEpisodes} seeds (${seconds.toFixed(0)} s, peak RSS ${peakRssMb().toFixed(0)} MB)`,
  );
  return { greedy, sampled, seconds };
}

function phaseLine(m: IterationMetrics): string {
  const ms = m.backendMs ?? {};
  const generation = (ms.generation ?? 0) / 1000;
  const scoring = (ms.scoring ?? 0) / 1000;
  const training = (ms.training ?? 0) / 1000;
  const other = m.seconds - generation - scoring - training;
  return `gen ${generation.toFixed(0)} s, score ${scoring.toFixed(0)} s, train ${training.toFixed(0)} s, other ${other.toFixed(0)} s`;
}

async function main(): Promise<void> {
  const policy = await makePolicy();
  const format = policy.chatFormat!;
  const env = () => makeCalculator(realTaskOptions(format));
  console.log(
    `bench:real — SmolLM2-135M-Instruct + LoRA r${lora.rank}, task ${realTaskName}, GRPO ${config.tasksPerIteration}×${config.groupSize} (minibatch ${config.minibatchSize}), lr ${config.learningRate}, T ${config.temperature}, budget ${(budgetSeconds / 60).toFixed(0)} min`,
  );
  console.log(`model loaded in ${elapsed().toFixed(0)} s, peak RSS ${peakRssMb().toFixed(0)} MB`);
  const before = await heldOut(policy, env, 'before RL');
  const curve: { iteration: number; minutes: number; success: number; validation?: number }[] = [];
  let lastIterationSeconds = 0;
  const reserve = () => before.seconds * 1.2 + lastIterationSeconds;
  const result = await runRl({
    policy,
    env,
    config,
    shouldStop: () => elapsed() + reserve() > budgetSeconds,
    onTrajectories: (trajectories) => {
      const first = trajectories[0]?.turns[0];
      if (first !== undefined)
        console.log(
          `  a reply: ${JSON.stringify(first.action.slice(0, 120))} → ${JSON.stringify(first.observation.slice(0, 60))}`,
        );
    },
    onIteration: (m) => {
      lastIterationSeconds = m.seconds;
      curve.push({
        iteration: m.iteration,
        minutes: elapsed() / 60,
        success: m.success,
        ...(m.validationSuccess === undefined ? {} : { validation: m.validationSuccess }),
      });
      const validation = m.validationSuccess === undefined ? '' : `, validation greedy ${percent(m.validationSuccess)}`;
      console.log(
        `iter ${m.iteration} @ ${(elapsed() / 60).toFixed(1)} min: train success ${percent(m.success)}, reward ${m.reward.toFixed(3)}, invalid ${percent(m.invalidActionRate)}, ` +
          `${m.trainedTokens} trained tokens, ${m.seconds.toFixed(0)} s (${phaseLine(m)})${validation}, peak RSS ${peakRssMb().toFixed(0)} MB`,
      );
    },
  });
  const iterations = result.history.length;
  const after = await heldOut(policy, env, `after ${iterations} iterations`);
  const minutes = elapsed() / 60;
  console.log('\ncurve (train success per iteration; validation greedy at intervals):');
  for (const point of curve)
    console.log(
      `  ${point.iteration}\t${point.minutes.toFixed(1)} min\t${percent(point.success)}${point.validation === undefined ? '' : `\tval ${percent(point.validation)}`}`,
    );
  const delta = (after.greedy - before.greedy) * 100;
  console.log(
    `\nheld-out greedy ${percent(before.greedy)} → ${percent(after.greedy)} (${delta >= 0 ? '+' : ''}${delta.toFixed(1)} points; target +15), sampled ${percent(before.sampled)} → ${percent(after.sampled)}`,
  );
  console.log(`peak RSS ${peakRssMb().toFixed(0)} MB, ${minutes.toFixed(1)} min in all`);
  console.log(
    `\nREADME row:\n| bench:real | SmolLM2-135M-Instruct, LoRA r16, pure RL (GRPO ${config.tasksPerIteration}×${config.groupSize}), calculator ${realTaskName} | ` +
      `held-out test greedy ${percent(before.greedy)} → ${percent(after.greedy)}, sampled (T=${config.temperature}) ${percent(before.sampled)} → ${percent(after.sampled)} (${testEpisodes} seeds) | ${iterations} iterations, ${minutes.toFixed(0)} min, peak RSS ${(peakRssMb() / 1024).toFixed(1)} GB |`,
  );
}

await main();
