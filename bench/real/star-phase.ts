/**
 * bench:real's STaR phase (`BENCH_REAL_STAR=<tasks>`, task `mul`): one round of src/train/star.ts
 * before RL — the zero-shot question played `BENCH_REAL_STAR_SAMPLES` times per train task (default
 * 4), the failed tasks again with the `callshot` scaffold as the hint, the successes fine-tuned on
 * under the zero-shot question (`BENCH_REAL_STAR_STEPS` LoRA SFT steps of `BENCH_REAL_STAR_BATCH`
 * episodes, default 24 × 8, lr `BENCH_REAL_STAR_LR`, default 1e-3). Prints what was solved and kept,
 * the SFT loss and the time of each step.
 */
import type { CalculatorEnv } from '../../src/envs/calculator/env.ts';
import { splitSeeds } from '../../src/envs/split.ts';
import type { TrainablePolicy } from '../../src/policy/types.ts';
import { starRound, type StarPlaySettings } from '../../src/train/star.ts';

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);

export async function starPhase(options: {
  policy: TrainablePolicy;
  env: () => CalculatorEnv;
  hintEnv: () => CalculatorEnv;
  tasks: number;
  play: StarPlaySettings;
}): Promise<void> {
  const samples = setting('BENCH_REAL_STAR_SAMPLES', 4);
  const sft = {
    steps: setting('BENCH_REAL_STAR_STEPS', 24),
    batchSize: setting('BENCH_REAL_STAR_BATCH', 8),
    learningRate: setting('BENCH_REAL_STAR_LR', 1e-3),
    warmupSteps: 2,
    evalEvery: 1_000_000,
  };
  const round = await starRound({
    policy: options.policy,
    env: options.env,
    hintEnv: options.hintEnv,
    seeds: splitSeeds('train', options.tasks),
    samples,
    play: options.play,
    sft,
  });
  const losses = round.sft?.history ?? [];
  console.log(
    `STaR round on ${round.tasks} train tasks × ${samples}: solved unaided ${round.solvedUnaided}, with the hint ${round.solvedWithHint} more; ` +
      `${round.examples.length} distinct successful episodes kept (hint removed); ` +
      `SFT ${losses.length} steps of ${sft.batchSize}, loss ${losses[0]?.loss.toFixed(3) ?? '-'} → ${losses.at(-1)?.loss.toFixed(3) ?? '-'}; ` +
      `${round.seconds.generation.toFixed(0)} s + ${round.seconds.rationalization.toFixed(0)} s generating, ${round.seconds.fineTuning.toFixed(0)} s fine-tuning`,
  );
}
