/**
 * Countdown (TinyZero): given numbers and a target, answer an equation that reaches the target
 * using each number at most once: `<think>…</think><answer>(25 - 5) * 3</answer>`. The verifier
 * checks the numbers used and the value. Reward (TinyZero; rewards.ts): 1 for a correct equation,
 * `partialReward` (0.1) for a readable but wrong one, 0 for an unreadable one; the answer ends
 * the episode. −formatPenalty per invalid turn; truncated after `maxTurns` turns.
 */
import { z } from 'zod';
import { Rng } from '../../core/index.ts';
import { parseOptions } from '../options.ts';
import { actionCharLimits } from '../action-format.ts';
import { ToolTaskEnv, toolTaskOptionsShape, type ToolTaskEpisode, type Verdict } from '../tool-task.ts';
import { checkEquation, generateCountdown, type CountdownTask, type EquationCheck } from './countdown.ts';
import { countdownRubric } from './rewards.ts';

export const countdownOptionsSchema = z.strictObject({
  ...toolTaskOptionsShape,
  maxActionChars: z.number().int().positive().default(actionCharLimits.text),
  maxTurns: z.number().int().positive().default(2),
  /** How many numbers are given. */
  numCount: z.number().int().min(2).max(6).default(4),
  /** Largest given number. */
  maxNumber: z.number().int().min(2).max(1000).default(99),
  /** Largest target. */
  maxTarget: z.number().int().min(2).max(100_000).default(100),
  /** Reward of a readable but wrong equation (TinyZero's format score). */
  partialReward: z.number().min(0).max(1).default(0.1),
});
export type CountdownEnvOptions = z.input<typeof countdownOptionsSchema>;

/** `observation.data`: the task. */
export type CountdownData = CountdownTask;

export interface CountdownEpisode extends ToolTaskEpisode {
  task: CountdownTask;
  /** The verifier's verdict on the answer (null before it). */
  check: EquationCheck['kind'] | null;
}

export class CountdownEnv extends ToolTaskEnv<
  CountdownTask,
  CountdownEpisode,
  z.output<typeof countdownOptionsSchema>
> {
  readonly name = 'countdown';
  readonly instructions =
    'Using the numbers, each at most once, and + - * / ( ), write an equation equal to the target. ' +
    'Reply <think>...</think><answer>(25 - 5) * 3</answer>.';
  readonly rewardComponents = countdownRubric(this.options);

  constructor(options: CountdownEnvOptions = {}) {
    super(parseOptions(countdownOptionsSchema, options, 'countdown'));
  }

  protected async start(
    seed: number,
    task: CountdownTask | undefined,
  ): Promise<{ episode: CountdownEpisode; text: string }> {
    const chosen = task ?? generateCountdown(new Rng(seed), this.options);
    return {
      episode: { task: chosen, check: null, turnsUsed: 0, ended: false },
      text: `Numbers: ${chosen.numbers.join(' ')}\nTarget: ${chosen.target}`,
    };
  }

  protected async finish(episode: CountdownEpisode, answer: string): Promise<Verdict> {
    const check = checkEquation(answer, episode.task);
    episode.check = check.kind;
    if (check.kind === 'correct') return { success: true, text: 'correct' };
    return {
      success: false,
      text: `${check.kind}: ${check.reason}`.slice(0, 200),
      info: { check: check.kind },
    };
  }

  protected data(episode: CountdownEpisode): CountdownData {
    return episode.task;
  }
}

export function makeCountdown(options: CountdownEnvOptions = {}): CountdownEnv {
  return new CountdownEnv(options);
}
