/**
 * Constructed runs for the monitor's tests: a healthy run of sum tasks (each task its own answer,
 * a long notes tool output and a short calculator result before the answer, a small format reward,
 * success and validation rising, entropy easing slowly), and helpers to break one thing in it.
 * Seeded: the same call gives the same run.
 */
import { Rng } from '../../core/rng.ts';
import type { RewardComponentsSpec } from '../../core/types.ts';
import type { MonitoredEpisode, MonitorIterationInput } from './monitor-types.ts';

export const sumRewardSpec: RewardComponentsSpec = {
  names: ['correct', 'format'],
  weights: { correct: 1, format: 0.1 },
  kinds: { correct: 'outcome', format: 'format' },
};

const notes =
  'Notes on addition: add the units, carry the tens, then add the hundreds; check the result by subtracting.';

export interface SumEpisodeOptions {
  groupId: string;
  a: number;
  b: number;
  /** The final answer text (default: the right sum). */
  answer?: string;
  /** Thinking before the answer (its length is the reply's length). */
  think?: string;
  /** Extra text in the calculator step's observation (outside the tool output). */
  observationNote?: string;
  correct?: boolean;
}

export function sumEpisode({
  groupId,
  a,
  b,
  answer,
  think = 'add them',
  observationNote = '',
  correct,
}: SumEpisodeOptions): MonitoredEpisode {
  const sum = String(a + b);
  const given = answer ?? sum;
  const right = correct ?? given === sum;
  return {
    groupId,
    prompt: `Compute ${a} + ${b}. Answer in <answer></answer>.`,
    turns: [
      {
        action: '<tool_call>{"name": "notes", "arguments": {}}</tool_call>',
        observation: `<information>${notes}</information>`,
      },
      {
        action: `<tool_call>{"name": "calculator", "arguments": {"expression": "${a} + ${b}"}}</tool_call>`,
        observation: `${observationNote}<tool_response>${sum}</tool_response>`,
      },
      { action: `<think>${think}</think><answer>${given}</answer>`, observation: right ? 'correct' : `wrong: ${sum}` },
    ],
    totalReward: (right ? 1 : 0) + 0.1,
    success: right,
    rewardComponents: { correct: right ? 1 : 0, format: 1 },
  };
}

export interface RunOptions {
  iterations?: number;
  groups?: number;
  groupSize?: number;
  seed?: number;
  /** Replaces an episode of the healthy run (iteration, its options, the rng) — to break one thing. */
  change?: (iteration: number, options: SumEpisodeOptions, rng: Rng) => SumEpisodeOptions | MonitoredEpisode;
  /** Replaces the iteration's entropy. */
  entropy?: (iteration: number, healthy: number) => number;
  /** Replaces the validation success of validated iterations (every third). */
  validation?: (iteration: number, healthy: number) => number;
}

/** The constructed run, one input per iteration. */
export function constructedRun({
  iterations = 10,
  groups = 8,
  groupSize = 4,
  seed = 7,
  change,
  entropy,
  validation,
}: RunOptions = {}): MonitorIterationInput[] {
  const rng = new Rng(seed);
  return Array.from({ length: iterations }, (_, index) => {
    const iteration = index + 1;
    const successRate = 0.4 + 0.03 * iteration;
    const episodes: MonitoredEpisode[] = [];
    for (let g = 0; g < groups; g++) {
      const a = 100 + rng.int(400);
      const b = 100 + rng.int(400);
      for (let k = 0; k < groupSize; k++) {
        const right = rng.next() < successRate;
        const options: SumEpisodeOptions = {
          groupId: `i${iteration}-g${g}`,
          a,
          b,
          answer: right ? String(a + b) : String(a + b + 1 + rng.int(50)),
          think: 'x'.repeat(20 + rng.int(40)),
        };
        const changed = change === undefined ? options : change(iteration, options, rng);
        episodes.push('turns' in changed ? changed : sumEpisode(changed));
      }
    }
    const healthyEntropy = 1 - 0.01 * iteration + 0.02 * rng.next();
    const validated = iteration % 3 === 0;
    const healthyValidation = 0.3 + 0.02 * iteration;
    return {
      iteration,
      episodes,
      entropy: entropy === undefined ? healthyEntropy : entropy(iteration, healthyEntropy),
      ...(validated
        ? { validationSuccess: validation === undefined ? healthyValidation : validation(iteration, healthyValidation) }
        : {}),
    };
  });
}
