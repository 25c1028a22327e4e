/**
 * `agentrl train --star-tasks <n> [--star-hint <file>]`: a STaR round (src/train/star.ts) on the
 * start weights, before the held-out test and RL — the train split's first `n` tasks played
 * `--star-samples` times each as the env asks; with `--star-hint`, the unsolved ones again with the
 * hint file's earlier turns before their question (src/train/star-hint.ts, rendered by the
 * model's chat template); the env-verified successes, hint removed, fine-tuned on
 * (`--star-steps` steps of `--star-batch-size` episodes at `--star-learning-rate`). The run's
 * `start` state is the policy after it, so the held-out test before RL and the KL reference are
 * that policy's. No expert demonstration: every kept reply is the model's own.
 */
import { z } from 'zod';
import { chatFormatOf } from '../chat/policy-chat-format.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Env } from '../core/types.ts';
import { splitSeeds } from '../envs/split.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { type StarPlaySettings, starRound } from '../train/star.ts';
import { readStarHint, withEarlierTurns } from '../train/star-hint.ts';
import { Progress } from './progress.ts';

export const starOptionsShape = {
  starTasks: z
    .number()
    .int()
    .nonnegative()
    .default(0)
    .describe(
      'a STaR round before RL on that many train tasks: their successes (and with --star-hint the hinted ones, hint removed) fine-tuned on; 0 = none',
    ),
  starSamples: z.number().int().positive().default(4).describe('episodes per task in the STaR round'),
  starHint: z
    .string()
    .optional()
    .describe(
      "the STaR hint: a chat JSONL file (OpenAI messages, one conversation) of earlier turns played before the unsolved tasks' question, in the model's chat template",
    ),
  starSteps: z.number().int().positive().default(12).describe("SFT steps on the STaR round's successes"),
  starBatchSize: z.number().int().positive().default(8).describe('episodes per STaR SFT step'),
  starLearningRate: z.number().positive().default(1e-3).describe('peak learning rate of the STaR SFT'),
};

export interface StarStartOptions extends StarPlaySettings {
  starTasks: number;
  starSamples: number;
  starHint?: string;
  starSteps: number;
  starBatchSize: number;
  starLearningRate: number;
  policies?: string;
}

/** Refuses, before the run is created, a hint without a round, a round on per-role policies, and a hint file that is not one. */
export async function checkStarOptions(options: StarStartOptions): Promise<void> {
  if (options.starHint !== undefined && options.starTasks === 0)
    throw new InvalidArgumentError('--star-hint is the hint of a STaR round: pass --star-tasks <n> too', {
      flag: 'starHint',
    });
  if (options.starTasks > 0 && options.policies === 'per-role')
    throw new InvalidArgumentError('--star-tasks runs one policy; --policies per-role trains a policy per role', {
      flag: 'starTasks',
    });
  if (options.starHint !== undefined) await readStarHint(options.starHint);
}

/** The STaR round on `policy` (see the header); a summary of what it kept, for the start checkpoint's metadata. */
export async function starStart(
  policy: TrainablePolicy,
  env: () => Env,
  options: StarStartOptions,
): Promise<Record<string, number>> {
  const turns = options.starHint === undefined ? undefined : await readStarHint(options.starHint);
  console.error(
    `train: STaR round on ${options.starTasks} train tasks × ${options.starSamples}${turns === undefined ? ' (no hint)' : `, the unsolved again with the ${turns.length} earlier turns of ${options.starHint}`} …`,
  );
  // One bar a step, made at the step's first update so its clock times that step alone.
  let current: { label: string; bar: Progress } | undefined;
  const bar = (label: string, total: number): Progress => {
    if (current?.label !== label) {
      current?.bar.done();
      current = { label, bar: new Progress({ label, total }) };
    }
    return current.bar;
  };
  const round = await starRound({
    policy,
    env,
    hintEnv: turns === undefined ? undefined : withEarlierTurns(env, turns, chatFormatOf(policy)),
    seeds: splitSeeds('train', options.starTasks),
    samples: options.starSamples,
    play: options,
    sft: {
      steps: options.starSteps,
      batchSize: options.starBatchSize,
      learningRate: options.starLearningRate,
      warmupSteps: Math.min(2, options.starSteps - 1),
      evalEvery: options.starSteps,
    },
    // No shouldStop: the start phase stops at once on Ctrl-C (train-phases.ts), never saving a half-done round.
    onEpisode: (step, { completed, total }) =>
      bar(step === 'unaided' ? 'star play' : 'star play with the hint', total).update(
        completed,
        {},
        completed === total,
      ),
    onSftProgress: (p) =>
      bar('star sft', options.starSteps).update(p.step, { loss: p.loss, 'tok/s': p.tokensPerSecond }),
  });
  const losses = round.sft?.history ?? [];
  current?.bar.done(current.label === 'star sft' ? { loss: losses.at(-1)?.loss ?? 0 } : undefined);
  console.error(
    `train: STaR round: solved unaided ${round.solvedUnaided} of ${round.tasks} tasks, with the hint ${round.solvedWithHint} more; ` +
      `${round.examples.length} distinct successful episodes kept` +
      (losses.length === 0
        ? ', nothing to fine-tune on (the start weights are unchanged)'
        : `, fine-tuned ${losses.length} steps (loss ${losses[0]?.loss.toFixed(3)} → ${losses.at(-1)?.loss.toFixed(3)})`) +
      `; ${(round.seconds.generation + round.seconds.rationalization).toFixed(0)} s generating, ${round.seconds.fineTuning.toFixed(0)} s fine-tuning`,
  );
  return {
    starTasks: round.tasks,
    starSolvedUnaided: round.solvedUnaided,
    starSolvedWithHint: round.solvedWithHint,
    starKept: round.examples.length,
    starSftSteps: losses.length,
  };
}
