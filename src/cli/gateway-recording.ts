/**
 * What `agentrl gateway` writes to the run store: every `record()` takes the sessions clients have
 * scored (POST /v1/sessions/{id}/reward) and commits them as one step of the run — each session
 * one trajectory (its group id is the session id), the step's metrics the gateway's counters
 * (cumulative: calls, sessions finished / timed out / dropped, calls abandoned, prefix breaks)
 * plus the mean reward and success of the step's sessions. A step is written only when there is
 * something new (a session, or a counter that moved), so an idle gateway writes nothing.
 */
import type { Tokenizer } from '../chat/tokenizer.ts';
import { tokenPieces } from '../chat/token-text.ts';
import type { Gateway } from '../serve/gateway/gateway.ts';
import type { FinishedSession, GatewayMetrics } from '../serve/gateway/session-store.ts';
import { sessionTrajectory } from '../serve/gateway/session-trajectory.ts';
import type { RunStore } from '../store/run-store.ts';
import type { TrajectoryRecord } from '../store/types.ts';

/** A scored session as a stored trajectory (ids as sampled; messages as the conversation ended). */
export function sessionRecord(
  session: FinishedSession,
  index: number,
  tokenizer: Tokenizer,
): Omit<TrajectoryRecord, 'step'> {
  const { reward, success } = session.reward ?? { reward: 0, success: false };
  const trajectory = sessionTrajectory(session.calls, { reward, success, groupId: session.id, seed: 0 });
  return {
    index,
    groupId: session.id,
    seed: 0,
    totalReward: trajectory.totalReward,
    success,
    truncated: session.calls.at(-1)?.finishReason === 'length',
    messages: session.messages,
    tokens: trajectory.tokens,
    pieces: tokenPieces(trajectory.tokens, tokenizer),
    lossMask: trajectory.lossMask,
    logprobs: trajectory.logprobs,
    rewards: trajectory.tokenRewards,
    advantages: null,
    turns: trajectory.turns.map(({ start, end, reward: turnReward, action, observation, invalidAction }) => ({
      start,
      end,
      reward: turnReward,
      action,
      observation,
      invalidAction,
    })),
  };
}

export class GatewayRecording {
  private step = 0;
  private lastCounters = '';

  constructor(private readonly options: { store: RunStore; runId: number; gateway: Gateway; tokenizer: Tokenizer }) {}

  /** Commits the scored sessions and the counters as the next step, when anything is new; returns the sessions recorded. */
  record(): number {
    const { store, runId, gateway, tokenizer } = this.options;
    const sessions = gateway.takeRewardedSessions().filter((session) => session.calls.length > 0);
    return this.commit(sessions, gateway.metrics(), tokenizer, store, runId);
  }

  /** The last step: the scored sessions, then `closing` (which drops the rest), then the counters as they ended. */
  async recordFinal(closing: () => Promise<void>): Promise<number> {
    const { store, runId, gateway, tokenizer } = this.options;
    const sessions = gateway.takeRewardedSessions().filter((session) => session.calls.length > 0);
    await closing();
    return this.commit(sessions, gateway.metrics(), tokenizer, store, runId);
  }

  private commit(
    sessions: FinishedSession[],
    counters: GatewayMetrics,
    tokenizer: Tokenizer,
    store: RunStore,
    runId: number,
  ): number {
    const countersKey = JSON.stringify(counters);
    if (sessions.length === 0 && countersKey === this.lastCounters) return 0;
    this.lastCounters = countersKey;
    const rewards = sessions.map((session) => session.reward?.reward ?? 0);
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    store.recordStep(runId, {
      step: ++this.step,
      metrics: {
        ...counters,
        sessions: sessions.length,
        ...(sessions.length === 0
          ? {}
          : {
              reward: mean(rewards),
              success: mean(sessions.map((session) => (session.reward?.success === true ? 1 : 0))),
            }),
      },
      trajectories: sessions.map((session, index) => sessionRecord(session, index, tokenizer)),
    });
    return sessions.length;
  }
}
