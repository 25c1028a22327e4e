/**
 * `gatewayCollect`: the training gateway as `runRl`'s source of trajectories.
 *
 *   const gateway = await startGateway({ sampler: policy });
 *   await runRl({ policy, env, collect: gatewayCollect({ gateway, agent, reward }) });
 *
 * For each task seed of an iteration it runs the user's agent function `groupSize` times (each
 * run its own session, opened at the trainer's temperature and reply budget), turns the finished
 * sessions into trajectories sharing one `groupId` per seed, and returns them. The agent is
 * handed what to point its client at — `baseURL`, `model`, `headers` (`x-session-id`) — and runs
 * unchanged otherwise. Session ids hold 128 random bits: no agent can name another run's session.
 *
 * A run's score is `reward({ messages, output, seed })` over the final messages (the last call's
 * messages and its reply) and the agent's return value, or, without `reward`, what the agent
 * posted to `/v1/sessions/{id}/reward`; or, with `rubric`, the rubric's total over each group's
 * sessions, the posted reward being its `posted` component (gateway-rubric.ts). A run is dropped (counted in the gateway's metrics, said
 * through `onWarning`) when its agent throws, its session times out, its reward function throws
 * or there is no reward, or it made no call. When every run of a collection fails, a
 * `GatewayError` carries the first failure.
 */
import { randomBytes } from 'node:crypto';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { EpisodeContext } from '../../rewards/episode-context.ts';
import { scoreEpisodes } from '../../rewards/trajectory-scoring.ts';
import type { Message, Trajectory } from '../../core/types.ts';
import { errorMessage } from '../http.ts';
import { GatewayError } from './errors.ts';
import type { Gateway } from './gateway.ts';
import { sessionHeader, sessionModelPrefix } from './session-id.ts';
import type { DropReason } from './session-store.ts';
import { finalMessages, sessionTrajectory } from './session-trajectory.ts';
import { type GatewayEpisode, type GatewayRubric, sessionEpisode } from './gateway-rubric.ts';

/** What one agent run is given. */
export interface AgentRun {
  /** The gateway's OpenAI base URL (…/v1). */
  baseURL: string;
  /** A placeholder key (the gateway checks none); clients that insist on one can send it. */
  apiKey: string;
  /** `agentrl/<sessionId>`: names the session for clients that cannot send headers. */
  model: string;
  /** `{ 'x-session-id': sessionId }`. */
  headers: Record<string, string>;
  /** `<seed>-<sample>-<128 random bits>`: unguessable, so it is the session's capability; keep it to this run. */
  sessionId: string;
  /** The task seed (the same for the runs of one group). */
  seed: number;
  /** Which of the group's runs this is (0 … groupSize − 1). */
  sample: number;
  iteration: number;
}

export interface RewardContext<Output> {
  /** The conversation as it ended: the last call's messages and its reply. */
  messages: Message[];
  /** What the agent function returned. */
  output: Output;
  seed: number;
  sample: number;
  sessionId: string;
}

/** A score, or a score and whether the task was solved (a plain number counts as solved when > 0). */
export type RewardValue = number | { reward: number; success: boolean };

/** Why a run produced no trajectory. */
export interface DroppedRun {
  sessionId: string;
  seed: number;
  reason: DropReason;
  message: string;
}

export interface GatewayCollectOptions<Output> {
  gateway: Gateway;
  agent: (run: AgentRun) => Promise<Output>;
  reward?: (context: RewardContext<Output>) => RewardValue | Promise<RewardValue>;
  /**
   * Scores each seed's sessions together (group rewards see the whole group); the posted reward is
   * its `posted` component (`postedReward`). A failed component is kept in `rewardFailures` (the
   * group is then left out of the update and counted by the trainer), never scored 0. Not with `reward`.
   */
  rubric?: GatewayRubric<Output>;
  /** Agent runs at once. Default: all runs of a collection (their calls batch together). */
  concurrency?: number;
  /** A run was dropped (default: console.warn). */
  onWarning?: (dropped: DroppedRun) => void;
  /** After each collection: the trajectories and the runs dropped. */
  onCollected?: (report: {
    iteration: number;
    trajectories: readonly Trajectory[];
    dropped: readonly DroppedRun[];
    prefixBreaks: number;
  }) => void;
}

/** The part of runRl's collect context the gateway needs. */
export interface CollectContext {
  seeds: readonly number[];
  iteration: number;
  config: { groupSize: number; temperature: number; maxNewTokens: number };
}

/** What an agent is handed for one session: the gateway's address, and the session's id three ways. */
function agentRun(
  baseURL: string,
  { sessionId, seed, sample, iteration }: { sessionId: string; seed: number; sample: number; iteration: number },
): AgentRun {
  return {
    baseURL,
    apiKey: 'agentrl',
    model: `${sessionModelPrefix}${sessionId}`,
    headers: { [sessionHeader]: sessionId },
    sessionId,
    seed,
    sample,
    iteration,
  };
}

/**
 * `<seed>-<sample>-<128 random bits>`: the id is the session's capability (whoever knows it calls
 * in the session and posts its reward), so an agent cannot derive another run's id from its own.
 */
function unguessableSessionId(seed: number, sample: number): string {
  return `${seed}-${sample}-${randomBytes(16).toString('base64url')}`;
}

type Score = { reward: number; success: boolean };

/** The session's score: the reward function's if there is one, else the reward posted to it; a failure says why there is none. */
async function sessionScore<Output>(
  reward: GatewayCollectOptions<Output>['reward'],
  session: { calls: Parameters<typeof finalMessages>[0]; reward?: RewardValue },
  { output, seed, sample, sessionId }: { output: Output; seed: number; sample: number; sessionId: string },
): Promise<{ score: Score } | { failure: [DropReason, string] }> {
  const value =
    reward !== undefined
      ? await reward({ messages: finalMessages(session.calls), output, seed, sample, sessionId })
      : session.reward;
  if (value === undefined)
    return { failure: ['no-reward', `no reward function and nothing was posted to /v1/sessions/${sessionId}/reward`] };
  const score = typeof value === 'number' ? { reward: value, success: value > 0 } : value;
  if (!Number.isFinite(score.reward)) return { failure: ['reward-error', `the reward is ${score.reward}`] };
  return { score };
}

/** Runs `task(0)` … `task(count - 1)`, at most `limit` at a time, each worker taking the next index. */
async function runAtMost(limit: number, count: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/** Where one agent run sits: its task seed and sample, the iteration and the group it joins. */
interface RunPlace {
  seed: number;
  sample: number;
  iteration: number;
  groupId: string;
  config: CollectContext['config'];
}

type SessionOutcome<Output> = {
  trajectory: Trajectory & { prefixBreaks: number };
  /** With a rubric: what the rubric scores (the trajectory carries the posted reward until then). */
  context?: EpisodeContext<GatewayEpisode<Output>>;
};

/** Runs the agent once in its own session; undefined when the run was dropped (pushed to `dropped`, and said). */
async function runAgentSession<Output>(
  options: GatewayCollectOptions<Output>,
  { seed, sample, iteration, groupId, config }: RunPlace,
  dropped: DroppedRun[],
  warn: (dropped: DroppedRun) => void,
): Promise<SessionOutcome<Output> | undefined> {
  const { gateway, agent, reward, rubric } = options;
  const sessionId = unguessableSessionId(seed, sample);
  const session = gateway.openSession(sessionId, { temperature: config.temperature, maxTokens: config.maxNewTokens });
  const fail = (reason: DropReason, message: string): undefined => {
    gateway.dropSession(sessionId, reason);
    const entry = { sessionId, seed, reason, message };
    dropped.push(entry);
    warn(entry);
    return undefined;
  };
  const timedOut = (message: string): undefined => void dropped.push({ sessionId, seed, reason: 'timeout', message });
  let output: Output;
  try {
    const outcome = await Promise.race([
      agent(agentRun(gateway.baseURL, { sessionId, seed, sample, iteration })).then((value) => ({ value })),
      session.dropped.then((reason) => ({ reason })),
    ]);
    if ('reason' in outcome) return timedOut('the session timed out before the agent finished');
    output = outcome.value;
  } catch (error) {
    return fail('agent-error', errorMessage(error));
  }
  if (session.calls.length === 0)
    return fail('no-calls', 'the agent made no call to the gateway (is its base URL the gateway?)');
  if (rubric !== undefined) {
    const finished = gateway.finishSession(sessionId);
    return finished === undefined
      ? timedOut('the session timed out')
      : sessionEpisode(finished, { seed, sample, sessionId, output, groupId });
  }
  let score: Score;
  try {
    const scored = await sessionScore(reward, session, { output, seed, sample, sessionId });
    if ('failure' in scored) return fail(...scored.failure);
    score = scored.score;
  } catch (error) {
    return fail('reward-error', errorMessage(error));
  }
  const finished = gateway.finishSession(sessionId);
  if (finished === undefined) return timedOut('the session timed out');
  return { trajectory: sessionTrajectory(finished.calls, { ...score, groupId, seed }) };
}

export function gatewayCollect<Output>(
  options: GatewayCollectOptions<Output>,
): (context: CollectContext) => Promise<Trajectory[]> {
  const { reward, rubric } = options;
  if (reward !== undefined && rubric !== undefined)
    throw new InvalidArgumentError(
      'gatewayCollect: give reward or rubric, not both (a rubric can read the posted reward: postedReward)',
    );
  const warn =
    options.onWarning ??
    ((dropped: DroppedRun) =>
      console.warn(`agentrl: gateway: session ${dropped.sessionId} dropped (${dropped.reason}): ${dropped.message}`));
  let collections = 0;

  return async ({ seeds, iteration, config }) => {
    const collection = collections++;
    const runs = seeds.flatMap((seed) => Array.from({ length: config.groupSize }, (_, sample) => ({ seed, sample })));
    const dropped: DroppedRun[] = [];
    const outcomes: Array<SessionOutcome<Output> | undefined> = new Array(runs.length);
    const limit = Math.max(1, Math.min(options.concurrency ?? runs.length, runs.length));
    await runAtMost(limit, runs.length, async (index) => {
      const { seed, sample } = at(runs, index, 'runs');
      const place = { seed, sample, iteration, groupId: `gateway-${iteration}-${collection}-${seed}`, config };
      outcomes[index] = await runAgentSession(options, place, dropped, warn);
    });
    const finished = outcomes.flatMap((outcome) => (outcome === undefined ? [] : [outcome]));
    const contexts = finished.flatMap((outcome) => (outcome.context === undefined ? [] : [outcome.context]));
    const trajectories =
      rubric === undefined ? finished.map((outcome) => outcome.trajectory) : await scoreEpisodes(rubric, contexts);
    if (trajectories.length === 0 && runs.length > 0) {
      const first = at(dropped, 0, 'dropped runs');
      throw new GatewayError(
        `every agent run of iteration ${iteration} failed; the first: session ${first.sessionId} (${first.reason}): ${first.message}`,
        { iteration, dropped },
      );
    }
    const prefixBreaks = finished.reduce((sum, outcome) => sum + outcome.trajectory.prefixBreaks, 0);
    options.onCollected?.({ iteration, trajectories, dropped, prefixBreaks });
    return trajectories;
  };
}
