/**
 * Plays one episode of an env with an expert (or any observation → action-text function).
 * Used by tests and by `agentrl envs` to measure an expert's success rate.
 */
import type { Env, StepResult } from '../core/index.ts';
import type { Expert } from './expert.ts';

export interface EpisodeSummary {
  seed: number;
  turns: number;
  totalReward: number;
  success: boolean;
  invalidActions: number;
  last: StepResult;
}

export async function playEpisode(env: Env, expert: Expert, seed: number, maxTurns = 1000): Promise<EpisodeSummary> {
  let observation = await env.reset({ seed });
  let totalReward = 0;
  let invalidActions = 0;
  for (let turn = 1; ; turn++) {
    const last = await env.step({ text: expert.act(observation) });
    totalReward += last.reward;
    if (last.info.invalidAction === true) invalidActions++;
    observation = last.observation;
    if (last.done || last.truncated || turn >= maxTurns) {
      return { seed, turns: turn, totalReward, success: last.info.success === true, invalidActions, last };
    }
  }
}
