/**
 * Progress against a fixed opponent: each trained role plays live on held-out seeds while every
 * other role is played by a fixed opponent (the role's start snapshot, the initial policy, or a
 * scripted expert) — never against the co-trained policies themselves, whose strength moves. What
 * the trainer validates with and bench/multi-agent.ts reports before → after.
 */
import type { Env } from '../../core/types.ts';
import type { RoleSpec } from '../../envs/role-spec.ts';
import { splitSeeds } from '../../envs/split.ts';
import { multiAgentRollout, type RolePlayer } from '../../rollout/multi-agent-rollout.ts';
import { learnerWin } from './league.ts';

export interface RoleEvaluation {
  /** The role's mean episode reward. */
  reward: number;
  /** Its win rate against the fixed opponents (a tie counts ½). */
  winRate: number;
  /** The env's success rate (e.g. a joint-optimal deal). */
  success: number;
}

export interface RoleEvaluationOptions<Task> {
  env: () => Env<Task>;
  roles: RoleSpec;
  /** The roles to evaluate and the live player of each. */
  live: Readonly<Record<string, RolePlayer>>;
  /** Who plays every other role. */
  opponents: Readonly<Record<string, RolePlayer>>;
  /** Held-out seeds: `episodes` seeds of this split. Default 'validation'. */
  split?: 'validation' | 'test';
  episodes: number;
  maxTurns: number;
  maxNewTokens: number;
  temperature: number;
  instructions?: boolean;
  /** Sampling seed. Default 0. */
  samplingSeed?: number;
}

export async function evaluateRoles<Task>(
  options: RoleEvaluationOptions<Task>,
): Promise<Record<string, RoleEvaluation>> {
  const seeds = splitSeeds(options.split ?? 'validation', options.episodes);
  const results: Record<string, RoleEvaluation> = {};
  for (const [role, player] of Object.entries(options.live)) {
    const { outcomes } = await multiAgentRollout({
      env: options.env,
      roles: options.roles,
      players: { ...options.opponents, [role]: player },
      seeds,
      maxTurns: options.maxTurns,
      maxNewTokens: options.maxNewTokens,
      temperature: options.temperature,
      instructions: options.instructions ?? true,
      samplingSeed: options.samplingSeed ?? 0,
    });
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
    results[role] = {
      reward: mean(outcomes.map((outcome) => outcome.rewards[role] ?? 0)),
      winRate: mean(outcomes.map((outcome) => learnerWin(outcome, role))),
      success: mean(outcomes.map((outcome) => (outcome.success ? 1 : 0))),
    };
  }
  return results;
}

/** `role/<role>/vsFixed/{reward,winRate,success}` scalars of an evaluation. */
export function evaluationScalars(evaluation: Readonly<Record<string, RoleEvaluation>>): Record<string, number> {
  const scalars: Record<string, number> = {};
  for (const [role, { reward, winRate, success }] of Object.entries(evaluation)) {
    scalars[`role/${role}/vsFixed/reward`] = reward;
    scalars[`role/${role}/vsFixed/winRate`] = winRate;
    scalars[`role/${role}/vsFixed/success`] = success;
  }
  return scalars;
}
