/**
 * `npm run bench:real`: pure RL — no SFT warm start, no scripted expert — of SmolLM2-135M-Instruct
 * (the pulled Q4_1 GGUF, dequantized) with LoRA rank 16 on all seven projections, on the
 * calculator task in the model's own conventions (bench/real/task.ts: a tool call in SmolLM2's
 * `<tool_call>[…]` format whose expression evaluates to the answer, then the right number, scores 1).
 *
 * It runs the product's RL path — `runRl` (GRPO) over the rollout in the model's chat format, the
 * same code `agentrl train --model smollm2-135m-instruct --lora-rank 16` runs — on the engine
 * (onnxruntime: sampling, scoring and the LoRA train step). Held-out success on the env's
 * test split (src/envs/split.ts) before and after, greedy and sampled. KL to the frozen base model
 * (GRPO's k3 term in the loss) holds the policy near where it started. Model selection on the
 * validation split (bench/real/best-validation.ts): sampled success at intervals, the best state
 * kept; the test split is scored at the end for the last policy and for the selected one. Stops at a
 * wall-clock budget. Prints the curve, each iteration's time split (generation / scoring / reference
 * scoring / training / other) and drift (KL to the base, PPO KL, clip fraction, entropy), the peak
 * RSS and a README row. Fixed seeds.
 *
 * Env: BENCH_REAL_STORE (a run store file: the run is recorded there for `agentrl dashboard`), BENCH_REAL_MINUTES (default 55: the budget, every evaluation included), BENCH_REAL_ITERATIONS (RL iterations at most, default: until the budget), BENCH_REAL_TEST (test
 * seeds, default 64), BENCH_REAL_VALIDATION (validation seeds per interval, default 32),
 * BENCH_REAL_VALIDATE_EVERY (iterations, default 2), BENCH_REAL_TASKS / BENCH_REAL_GROUP (tasks ×
 * episodes per iteration, default 4 × 8), BENCH_REAL_MINIBATCH (episodes per optimizer step, default 8:
 * four steps an iteration), BENCH_REAL_LR (default 1e-3), BENCH_REAL_KL (the KL coefficient, default
 * 0.05; 0 = no reference), BENCH_REAL_TEMPERATURE (the rollout's sampling temperature, default 1; the
 * sampled validation and held-out test sample at it too). The task, reward and curriculum:
 * BENCH_REAL_TASK (add | mul), BENCH_REAL_REWARD (outcome | shaped), BENCH_REAL_CURRICULUM (none |
 * operands | prompt), BENCH_REAL_ADVANCE_AT, BENCH_REAL_STAR (a STaR round before RL: bench/real/training-task.ts,
 * bench/real/star-phase.ts).
 */
import type { CalculatorEnv } from '../src/envs/calculator/env.ts';
import { loadModelCheckpoint } from '../src/model/model-sources.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { heldOutSuccess, type IterationMetrics, type RlConfigInput, rlConfigSchema, runRl } from '../src/train/rl.ts';
import { benchRecording, monitorWatch } from './real/run-recording.ts';
import { BestValidation } from './real/best-validation.ts';
import { withPhaseTimes } from './real/phase-times.ts';
import { makeTrainingTask, readTrainingTask, type TrainingTask } from './real/training-task.ts';
import { starPhase } from './real/star-phase.ts';

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const budgetSeconds = setting('BENCH_REAL_MINUTES', 55) * 60;
const validationEpisodes = setting('BENCH_REAL_VALIDATION', 32);
const validateEvery = setting('BENCH_REAL_VALIDATE_EVERY', 2);
const testEpisodes = setting('BENCH_REAL_TEST', 64);
const lora = {
  rank: 16,
  alpha: 32,
  targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] as const,
};
const config: RlConfigInput = {
  algo: 'grpo',
  klCoef: setting('BENCH_REAL_KL', 0.05),
  iterations: setting('BENCH_REAL_ITERATIONS', 10_000), // by default the wall-clock budget stops the run
  tasksPerIteration: setting('BENCH_REAL_TASKS', 4),
  groupSize: setting('BENCH_REAL_GROUP', 8),
  minibatchSize: setting('BENCH_REAL_MINIBATCH', 8),
  maxTurns: 3,
  maxNewTokens: 48,
  temperature: setting('BENCH_REAL_TEMPERATURE', 1),
  systemPrompt: true,
  learningRate: setting('BENCH_REAL_LR', 1e-3),
  // runRl's own (greedy) validation only runs when it stops; the bench validates itself (BestValidation).
  validateEvery: 0,
  validationEpisodes: 8,
  seed: 0,
};

/** The config the bench's evaluations (validation, held-out test) read: `config` with its defaults. */
const evaluationConfig = rlConfigSchema.parse(config);

const started = performance.now();
const elapsed = (): number => (performance.now() - started) / 1000;
const peakRssMb = (): number => process.resourceUsage().maxRSS / 1024;
const percent = (rate: number): string => `${(rate * 100).toFixed(1)}%`;

/** The trained policy: LoRA on the base. */
async function makePolicy() {
  const checkpoint = await loadModelCheckpoint('smollm2-135m-instruct');
  if (checkpoint.chatFormat === undefined) throw new Error('smollm2-135m-instruct: no chat format in the pulled model');
  const modelConfig = { ...checkpoint.config, maxSeqLen: 512 };
  const model = await TransformerModel.fromParams(modelConfig, checkpoint.params, {
    seed: 0,
    lora: { ...lora, targetModules: [...lora.targetModules] },
  });
  return { model, policy: withPhaseTimes(new BuiltinPolicy({ model, chatFormat: checkpoint.chatFormat })) };
}

/**
 * The KL reference (scoring only), when KL is on: the policy as RL starts — the base, or the policy
 * after the STaR round — frozen, as a fork of its adapters over the shared base (it shares the host
 * weights and the generation session instead of holding a second copy).
 */
async function frozenReference(model: TransformerModel, policy: BuiltinPolicy) {
  if (config.klCoef === 0) return undefined;
  const fork = await model.forkAdapters({ seed: 0, adapters: await model.adapterParams() });
  return withPhaseTimes(new BuiltinPolicy({ model: fork, chatFormat: policy.chatFormat }));
}

type Test = { greedy: number; sampled: number; seconds: number };

async function heldOut(policy: BuiltinPolicy, env: () => CalculatorEnv, label: string): Promise<Test> {
  const t0 = performance.now();
  const { greedy, sampled } = await heldOutSuccess(
    policy,
    env,
    { ...evaluationConfig, validationEpisodes: testEpisodes },
    { samples: 1 },
  );
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `held-out test ${label}: greedy ${percent(greedy)}, sampled (T=${config.temperature}) ${percent(sampled)} on ${testEpisodes} seeds (${seconds.toFixed(0)} s, peak RSS ${peakRssMb().toFixed(0)} MB)`,
  );
  return { greedy, sampled, seconds };
}

function phaseLine(m: IterationMetrics): string {
  const ms = m.backendMs ?? {};
  const seconds = (kind: string): number => (ms[kind] ?? 0) / 1000;
  const reference = seconds('reference.scoring');
  const other = m.seconds - seconds('generation') - seconds('scoring') - seconds('training') - reference;
  return (
    `gen ${seconds('generation').toFixed(0)} s, score ${seconds('scoring').toFixed(0)} s, ref ${reference.toFixed(0)} s, ` +
    `train ${seconds('training').toFixed(0)} s, other ${other.toFixed(0)} s`
  );
}

function driftLine(m: IterationMetrics): string {
  return `kl-to-base ${m.klToReference.toFixed(4)}, ppo-kl ${m.ppoKl.toFixed(4)}, clipfrac ${m.clipfrac.toFixed(3)}, entropy ${m.entropy.toFixed(3)}, grad-norm ${m.gradNorm.toFixed(2)}`;
}

/** The iteration's mean reward components (`reward/<name>`), e.g. `call_format 0.250 solved 0.000`. */
function componentsLine(m: IterationMetrics): string {
  return Object.entries(m.scalars ?? {})
    .filter(([key]) => key.startsWith('reward/') && !key.endsWith('/failures'))
    .map(([key, value]) => `${key.slice('reward/'.length)} ${value.toFixed(3)}`)
    .concat(m.scalars?.['curriculum/stage'] === undefined ? [] : [`stage ${m.scalars['curriculum/stage']}`])
    .join(' ');
}

function iterationLine(m: IterationMetrics): string {
  return (
    `iter ${m.iteration} @ ${(elapsed() / 60).toFixed(1)} min: train success ${percent(m.success)}, reward ${m.reward.toFixed(3)} (${componentsLine(m)}), invalid ${percent(m.invalidActionRate)}, ` +
    `${m.trainedTokens} trained tokens, ${m.seconds.toFixed(0)} s (${phaseLine(m)}); ${driftLine(m)}; peak RSS ${peakRssMb().toFixed(0)} MB`
  );
}

const signed = (points: number): string => `${points >= 0 ? '+' : ''}${points.toFixed(1)}`;

function report(
  taskName: string,
  before: Test,
  last: Test,
  selected: { test: Test; iteration: number },
  iterations: number,
): void {
  const minutes = elapsed() / 60;
  const line = (label: string, after: Test) =>
    `${label}: greedy ${percent(before.greedy)} → ${percent(after.greedy)} (${signed((after.greedy - before.greedy) * 100)}), ` +
    `sampled (T=${config.temperature}) ${percent(before.sampled)} → ${percent(after.sampled)} (${signed((after.sampled - before.sampled) * 100)} points; target +15)`;
  console.log(`\n${line(`held-out test, last policy (iteration ${iterations})`, last)}`);
  console.log(line(`held-out test, validation-selected policy (iteration ${selected.iteration})`, selected.test));
  console.log(`peak RSS ${peakRssMb().toFixed(0)} MB, ${minutes.toFixed(1)} min in all`);
  console.log(
    `\nREADME row:\n| bench:real | SmolLM2-135M-Instruct, LoRA r16, pure RL (GRPO ${config.tasksPerIteration}×${config.groupSize}, KL ${config.klCoef}), calculator ${taskName} | ` +
      `held-out test sampled (T=${config.temperature}) ${percent(before.sampled)} → ${percent(selected.test.sampled)} (selected, iteration ${selected.iteration}) / ${percent(last.sampled)} (last), ` +
      `greedy ${percent(before.greedy)} → ${percent(selected.test.greedy)} / ${percent(last.greedy)} (${testEpisodes} seeds) | ${iterations} iterations, ${minutes.toFixed(0)} min, peak RSS ${(peakRssMb() / 1024).toFixed(1)} GB |`,
  );
}

/** BENCH_REAL_SAVE=<folder> keeps the last policy as a checkpoint that serve-policy and check:served load. */
async function saveLastPolicy(policy: BuiltinPolicy, taskName: string, iterations: number): Promise<void> {
  const saveTo = process.env.BENCH_REAL_SAVE;
  if (saveTo === undefined || saveTo === '') return;
  await policy.save(saveTo, { metadata: { bench: 'bench:real', task: taskName, iterations } });
  console.log(`last policy saved to ${saveTo} (agentrl serve-policy ${saveTo}; npm run check:served -- ${saveTo})`);
}

/** The held-out test of the validation-selected policy; the last one's when validation chose the last. */
async function testSelected(
  policy: BuiltinPolicy,
  env: () => CalculatorEnv,
  selection: BestValidation<unknown>,
  last: { test: Test; iteration: number },
): Promise<{ test: Test; iteration: number }> {
  const chosen = selection.selected();
  if (chosen === null || chosen.iteration === last.iteration) return last;
  await policy.loadState(chosen.state);
  return {
    test: await heldOut(policy, env, `validation-selected (iteration ${chosen.iteration})`),
    iteration: chosen.iteration,
  };
}

/** `BENCH_REAL_STAR`: the STaR round (bench/real/star-phase.ts) and the held-out test after it. */
async function maybeStar(policy: BuiltinPolicy, training: TrainingTask, tasks: number): Promise<void> {
  if (training.hintEnv === undefined) return;
  await starPhase({ policy, env: training.trainEnv, hintEnv: training.hintEnv, tasks, play: evaluationConfig });
  await heldOut(policy, training.testEnv, 'after the STaR round');
}

async function main(): Promise<void> {
  const { model, policy } = await makePolicy();
  const format = policy.chatFormat!;
  const choice = readTrainingTask();
  const training = makeTrainingTask(format, choice);
  const env = training.testEnv;
  const curriculum = training.curriculum;
  console.log(
    `bench:real — SmolLM2-135M-Instruct + LoRA r${lora.rank}, task ${training.name}, GRPO ${config.tasksPerIteration}×${config.groupSize} (minibatch ${config.minibatchSize}), lr ${config.learningRate}, KL ${config.klCoef}, T ${config.temperature}, budget ${(budgetSeconds / 60).toFixed(0)} min`,
  );
  console.log(`model loaded in ${elapsed().toFixed(0)} s, peak RSS ${peakRssMb().toFixed(0)} MB`);
  const before = await heldOut(policy, env, 'before RL');
  await maybeStar(policy, training, choice.star);
  const reference = await frozenReference(model, policy);
  const selection = new BestValidation(policy, env, { ...evaluationConfig, validationEpisodes }, validateEvery);
  const logValidation = (point: Awaited<ReturnType<typeof selection.maybeValidate>>) => {
    if (point !== undefined)
      console.log(
        `  validation sampled @ iteration ${point.iteration}: ${percent(point.success)} on ${validationEpisodes} seeds (${point.seconds.toFixed(0)} s)`,
      );
  };
  logValidation(await selection.maybeValidate(0));
  const curve: { iteration: number; minutes: number; success: number }[] = [];
  let lastIterationSeconds = 0;
  // Room for what follows the last iteration: two held-out tests (last and selected) and one more iteration.
  const reserve = () => before.seconds * 2.4 + lastIterationSeconds;
  const recording = benchRecording(process.env.BENCH_REAL_STORE, {
    config: { ...config, bench: 'bench:real', task: training.name, loraRank: lora.rank },
    seed: rlConfigSchema.parse(config).seed,
    tokenizer: format.tokenizer,
  });
  // The reward-hacking monitor watches (mode warn): each fired signal is printed as a warning.
  const watch = monitorWatch(env().rewardComponents);
  const result = await runRl({
    policy,
    reference,
    env: training.trainEnv,
    config,
    monitor: watch.monitor,
    onWarning: watch.onWarning,
    onAdvantages: recording?.hooks.onAdvantages,
    shouldStop: () => elapsed() + reserve() > budgetSeconds,
    onTrajectories: async (trajectories, iteration) => {
      await recording?.hooks.onTrajectories?.(trajectories, iteration);
      const first = trajectories[0]?.turns[0];
      if (first !== undefined)
        console.log(
          `  a reply: ${JSON.stringify(first.action.slice(0, 120))} → ${JSON.stringify(first.observation.slice(0, 60))}`,
        );
    },
    onIteration: async (m, state) => {
      if (curriculum !== undefined) {
        // The stage this iteration played, then the move its success earned.
        m.scalars = { ...m.scalars, ...curriculum.metrics() };
        if (curriculum.observe(m.success))
          console.log(`  curriculum: stage ${curriculum.stage} of 0…${curriculum.stages - 1} from the next iteration`);
      }
      await recording?.commit(policy, m, state);
      lastIterationSeconds = m.seconds;
      curve.push({ iteration: m.iteration, minutes: elapsed() / 60, success: m.success });
      console.log(iterationLine(m));
      logValidation(await selection.maybeValidate(m.iteration));
    },
  });
  const iterations = result.history.length;
  recording?.finish('completed');
  console.log(watch.summary(iterations));
  const last = await heldOut(policy, env, `after ${iterations} iterations (last policy)`);
  await saveLastPolicy(policy, training.name, iterations);
  const selected = await testSelected(policy, env, selection, { test: last, iteration: iterations });
  console.log('\ncurve (train success per iteration; sampled validation at intervals):');
  for (const point of curve)
    console.log(`  ${point.iteration}\t${point.minutes.toFixed(1)} min\t${percent(point.success)}`);
  for (const point of selection.points) console.log(`  val @ ${point.iteration}\t${percent(point.success)}`);
  report(training.name, before, last, selected, iterations);
}

await main();
