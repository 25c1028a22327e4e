/**
 * `gatewayCollect({ rubric })`: the sessions of each task group are scored together by a rubric
 * (src/rewards/), as the trainer scores env episodes (src/rewards/trajectory-scoring.ts: the total on
 * the last generated token, every component kept per trajectory). A session's context is an
 * `EpisodeContext` whose `task` is the run (`GatewayEpisode`: seed, sample, the agent's output, the
 * final messages, and the reward the agent posted, if any), and whose prompt is the first call's
 * first user message. The posted reward is the built-in `posted` component (`postedReward`); a
 * session with nothing posted fails that component — a named failure, never 0 — and its group is
 * left out of the update.
 */
import type { Message, Trajectory } from '../../core/types.ts';
import { InvalidArgumentError } from '../../core/errors.ts';
import type { EpisodeContext } from '../../rewards/episode-context.ts';
import { reward, type RewardFunction } from '../../rewards/reward.ts';
import type { Rubric } from '../../rewards/rubric.ts';
import type { FinishedSession } from './session-store.ts';
import { finalMessages, sessionTrajectory } from './session-trajectory.ts';

/** One agent run as a rubric sees it (the `task` of its `EpisodeContext`). */
export interface GatewayEpisode<Output = unknown> {
  seed: number;
  sample: number;
  sessionId: string;
  /** What the agent function returned. */
  output: Output;
  /** The conversation as it ended: the last call's messages and its reply. */
  messages: Message[];
  /** What the agent posted to /v1/sessions/{id}/reward, if anything. */
  posted?: { reward: number; success: boolean };
}

export type GatewayRubric<Output = unknown> = Rubric<EpisodeContext<GatewayEpisode<Output>>>;

/** The reward the agent posted to its session; a session with none fails this component (it is not scored 0). */
export const postedReward: RewardFunction<EpisodeContext<GatewayEpisode>> = reward('posted', ({ task }) => {
  if (task?.posted === undefined)
    throw new InvalidArgumentError(`session ${task?.sessionId ?? '?'}: nothing was posted to its /reward`);
  return task.posted.reward;
});

/** A finished session as a trajectory (the posted reward, or 0, before the rubric rescores it) and its rubric context. */
export function sessionEpisode<Output>(
  finished: FinishedSession,
  run: { seed: number; sample: number; sessionId: string; output: Output; groupId: string },
): { trajectory: Trajectory & { prefixBreaks: number }; context: EpisodeContext<GatewayEpisode<Output>> } {
  const { seed, sample, sessionId, output, groupId } = run;
  const posted = finished.reward;
  const trajectory = sessionTrajectory(finished.calls, {
    reward: posted?.reward ?? 0,
    success: posted?.success ?? false,
    groupId,
    seed,
  });
  const prompt = finished.calls[0]?.messages.find((message) => message.role === 'user')?.content ?? '';
  const task: GatewayEpisode<Output> = {
    seed,
    sample,
    sessionId,
    output,
    messages: finalMessages(finished.calls),
    ...(posted === undefined ? {} : { posted }),
  };
  return { trajectory, context: { trajectory, prompt, task } };
}
