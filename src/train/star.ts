/**
 * STaR — Self-Taught Reasoner (Zelikman et al. 2022, arXiv:2203.14465), one round, on an env:
 *
 *   1. generate: play each task `samples` times as the task asks (the env's own prompt); keep the
 *      episodes the env scores a success;
 *   2. rationalize: the tasks with no success are played again with a hint in their prompt (the
 *      `hintEnv`: the same task and seed, another first observation — in the paper, the answer;
 *      here, whatever scaffold makes the model succeed, e.g. worked examples of a tool call); keep
 *      the successes, and *remove the hint*: the kept episode's replies (and the env's answers to
 *      them) are put after the task's own prompt, as if the model had found them unaided;
 *   3. fine-tune on the kept episodes (next-token NLL on the policy's own tokens only: prompts,
 *      tool outputs and env turns are masked) — rejection-sampling fine-tuning on self-generated,
 *      env-verified successes, no expert demonstration anywhere.
 *
 * Where this differs from the paper: the paper restarts every round from the original weights and
 * trains on the union of all rounds' rationales; one round here fine-tunes the policy as it is (the
 * caller runs more rounds, or RL, after it). Every kept episode is used, distinct replies only.
 *
 *   const round = await starRound({ policy, env: makeTask, hintEnv: makeTaskWithExamples, seeds, config });
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { Env, Trajectory } from '../core/types.ts';
import type { TrainablePolicy } from '../policy/types.ts';
import { rollout } from '../rollout/index.ts';
import { replyStopStrings } from './loop-config.ts';
import type { RlConfig } from './rl.ts';
import { runSft, type SftConfigInput, type SftExample, type SftProgress, type SftResult } from './sft.ts';

/** The rollout settings STaR plays with (an RL config's fields, so training and STaR play alike). */
export type StarPlaySettings = Pick<
  RlConfig,
  'maxTurns' | 'maxNewTokens' | 'temperature' | 'systemPrompt' | 'stopAtTag' | 'seed'
>;

export interface StarRoundOptions<Task> {
  policy: TrainablePolicy;
  /** The task as it will be tested. */
  env: () => Env<Task>;
  /** The same task with a hint in its first observation: `reset({ seed })` must give the same `data` and `privileged` as `env`'s (checked on every task it plays). Without it, step 2 is skipped. */
  hintEnv?: () => Env<Task>;
  /** Task seeds (the train split's). */
  seeds: readonly number[];
  /** Episodes per task in each step. Default 4. */
  samples?: number;
  play: StarPlaySettings;
  /** The fine-tuning step (3). */
  sft: SftConfigInput;
  /** Checked between SFT steps. */
  shouldStop?: () => boolean;
  /** Each episode played in step 1 ('unaided') and step 2 ('hinted'), as it ends. */
  onEpisode?: (step: 'unaided' | 'hinted', progress: { completed: number; total: number }) => void;
  /** Each SFT step of step 3. */
  onSftProgress?: (progress: SftProgress) => void;
}

export interface StarRound {
  /** Tasks solved in step 1 (at least one of `samples`), and in step 2 among the rest. */
  solvedUnaided: number;
  solvedWithHint: number;
  tasks: number;
  /** Distinct successful episodes kept, each in the task's own prompt. */
  examples: SftExample[];
  /** Undefined when nothing was kept (no fine-tuning). */
  sft: SftResult | undefined;
  seconds: { generation: number; rationalization: number; fineTuning: number };
}

/** The length of the prompt before the policy's first token. */
function promptLength(trajectory: Trajectory): number {
  const first = trajectory.lossMask.indexOf(1);
  return first < 0 ? trajectory.tokens.length : first;
}

/** `trajectory` with its first prompt replaced by `prompt` (same task, other first observation). */
function withPrompt(trajectory: Trajectory, prompt: readonly number[]): SftExample {
  const start = promptLength(trajectory);
  return {
    tokens: [...prompt, ...trajectory.tokens.slice(start)],
    mask: [...prompt.map(() => 0), ...trajectory.lossMask.slice(start)],
  };
}

function asExample(trajectory: Trajectory): SftExample {
  return { tokens: trajectory.tokens, mask: trajectory.lossMask };
}

async function sameTask<Task>(env: () => Env<Task>, hintEnv: () => Env<Task>, seed: number): Promise<void> {
  const [task, hinted] = [env(), hintEnv()];
  const [a, b] = [await task.reset({ seed }), await hinted.reset({ seed })];
  await task.close?.();
  await hinted.close?.();
  const key = (observation: typeof a) => JSON.stringify([observation.data ?? null, observation.privileged ?? null]);
  if (key(a) !== key(b))
    throw new InvalidArgumentError(
      `STaR: the hint env's task for seed ${seed} is not the env's (their observations' data or privileged parts differ), so a hinted success says nothing about the task`,
    );
}

function distinct(examples: SftExample[]): SftExample[] {
  const seen = new Set<string>();
  return examples.filter((example) => {
    const key = example.tokens.join(',');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Plays `samples` episodes of each task seed (one step of the round), timed. */
async function playTasks<Task>(
  options: StarRoundOptions<Task>,
  step: 'unaided' | 'hinted',
  makeEnv: () => Env<Task>,
  taskSeeds: readonly number[],
  samplingSeed: number,
): Promise<{ trajectories: Trajectory[]; seconds: number }> {
  const { policy, play } = options;
  const t0 = performance.now();
  const { trajectories } = await rollout({
    policy,
    env: makeEnv,
    seeds: taskSeeds,
    groupSize: options.samples ?? 4,
    maxTurns: play.maxTurns,
    maxNewTokens: play.maxNewTokens,
    temperature: play.temperature,
    stopStrings: replyStopStrings(play),
    instructions: play.systemPrompt,
    samplingSeed,
    onEpisode: (_, progress) => options.onEpisode?.(step, progress),
  });
  return { trajectories, seconds: (performance.now() - t0) / 1000 };
}

export async function starRound<Task>(options: StarRoundOptions<Task>): Promise<StarRound> {
  const { policy, env, hintEnv, seeds, play } = options;
  const samples = options.samples ?? 4;
  if (seeds.length === 0) throw new InvalidArgumentError('STaR: no task seeds');

  // 1. Generate: the task as it is.
  const unaided = await playTasks(options, 'unaided', env, seeds, play.seed);
  const kept: SftExample[] = [];
  const unsolved: number[] = [];
  const taskPrompt = new Map<number, number[]>();
  seeds.forEach((seed, task) => {
    const episodes = unaided.trajectories.slice(task * samples, (task + 1) * samples);
    const first = episodes[0];
    if (first !== undefined) taskPrompt.set(seed, first.tokens.slice(0, promptLength(first)));
    const solved = episodes.filter((episode) => episode.success);
    kept.push(...solved.map(asExample));
    if (solved.length === 0) unsolved.push(seed);
  });

  // 2. Rationalize: the unsolved tasks with the hint, kept in the task's own prompt.
  let solvedWithHint = 0;
  let rationalizationSeconds = 0;
  if (hintEnv !== undefined && unsolved.length > 0) {
    for (const seed of unsolved) await sameTask(env, hintEnv, seed);
    const hinted = await playTasks(options, 'hinted', hintEnv, unsolved, play.seed + 1);
    rationalizationSeconds = hinted.seconds;
    unsolved.forEach((seed, task) => {
      const solved = hinted.trajectories.slice(task * samples, (task + 1) * samples).filter((e) => e.success);
      const prompt = taskPrompt.get(seed);
      if (solved.length === 0 || prompt === undefined) return;
      solvedWithHint++;
      kept.push(...solved.map((episode) => withPrompt(episode, prompt)));
    });
  }

  // 3. Fine-tune on what was kept.
  const examples = distinct(kept);
  const t0 = performance.now();
  const sft =
    examples.length === 0
      ? undefined
      : await runSft({
          policy,
          train: examples,
          config: options.sft,
          shouldStop: options.shouldStop,
          onProgress: options.onSftProgress,
        });
  return {
    solvedUnaided: seeds.length - unsolved.length,
    solvedWithHint,
    tasks: seeds.length,
    examples,
    sft,
    seconds: {
      generation: unaided.seconds,
      rationalization: rationalizationSeconds,
      fineTuning: (performance.now() - t0) / 1000,
    },
  };
}
