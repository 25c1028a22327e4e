/**
 * The multi-agent rollout: each agent of a multi-agent env (a `RoleSpec` beside it) is played by
 * its own player — a policy, or a scripted expert — and each role a policy plays gets its own
 * trajectory (its own observations and replies, `role` set, grouped under `<env>:<seed>/<role>` so
 * group baselines stay within a role).
 *
 *   const { trajectories, outcomes } = await multiAgentRollout({
 *     env: () => makeNegotiation(), roles: negotiationRoles(),
 *     players: { alice: { policy: alice }, bob: { policy: bob } },
 *     seeds: splitSeeds('train', 8), groupSize: 4,
 *   });
 *
 * Batched generation: every turn, the live episodes whose acting role a policy plays are grouped
 * by that policy (the object), and each distinct policy gets ONE `generateBatch` call for the turn
 * (one sampling seed per turn, from `samplingSeed`); two roles of one shared policy go in one call.
 * Roles played by LoRA forks of one base (`forkAdapters`) go in ONE call per turn for all of them,
 * each row with its own role's adapters (multi-agent-rollout-across.ts → engine `generateAcross`).
 * `players` may be a function of the episode (a league puts a different opponent in each group).
 * Episodes end on `done`, on the env's `truncated`, after `maxTurns` turns of all roles together,
 * or (truncated) when a role's next prompt would not leave room for a full reply. No tool protocol
 * and no bounded history here: the env gets `{ text }`, each role sees its whole conversation.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import type { Env, Trajectory } from '../core/types.ts';
import type { RoleSpec } from '../envs/role-spec.ts';
import type { Generation, Policy } from '../policy/types.ts';
import type { EpisodeStart } from './episode.ts';
import type { RolloutOptions } from './rollout.ts';
import {
  finishMultiAgentEpisode,
  playMultiAgentTurn,
  startMultiAgentEpisode,
  type EpisodeOutcome,
  type MultiAgentEpisode,
  type MultiAgentSettings,
} from './multi-agent-episode.ts';
import { generateAcrossForks } from './multi-agent-rollout-across.ts';
import type { PolicySeat, RolePlayer } from './role-seat.ts';
import { rolloutStats, type RolloutStats } from './stats.ts';

export type { EpisodeOutcome } from './multi-agent-episode.ts';
export type { RolePlayer } from './role-seat.ts';

/** Episode `index` of task `taskIndex` (its G episodes share a task). */
export interface EpisodeSlot {
  index: number;
  taskIndex: number;
  seed: number;
}

/** The sampling and batching options mean what they mean for `rollout` (rollout.ts). */
type SharedRolloutOptions<Task> = Pick<
  RolloutOptions<Task>,
  | 'seeds'
  | 'tasks'
  | 'groupSize'
  | 'maxNewTokens'
  | 'temperature'
  | 'topP'
  | 'stopStrings'
  | 'concurrency'
  | 'samplingSeed'
>;

export interface MultiAgentRolloutOptions<Task = unknown> extends SharedRolloutOptions<Task> {
  /** Makes a fresh env for each episode. */
  env: () => Env<Task>;
  /** The env's agents: who acts, whose reward a step pays. */
  roles: RoleSpec;
  /** Who plays each role (the same for every episode, or chosen per episode). */
  players: Readonly<Record<string, RolePlayer>> | ((slot: EpisodeSlot) => Readonly<Record<string, RolePlayer>>);
  /** Turns per episode, all roles together. Default 10. */
  maxTurns?: number;
  /** Put `env.instructions` in each seat's system message. Default true. */
  instructions?: boolean;
  /** Called as each episode ends. */
  onEpisode?: (outcome: EpisodeOutcome, progress: { completed: number; total: number }) => void;
  /** Milliseconds clock. Default performance.now. */
  now?: () => number;
}

export interface MultiAgentRolloutResult {
  /** Per episode in order, one trajectory per role a policy played (in the spec's role order). */
  trajectories: Trajectory[];
  /** Aligned with `trajectories`: each one's episode start. */
  episodes: EpisodeStart[];
  /** One per episode, in episode order: every role's reward (experts' too). */
  outcomes: EpisodeOutcome[];
  /** Over the trajectories (a role's reward, its own turns). */
  stats: RolloutStats;
}

export async function multiAgentRollout<Task>(
  options: MultiAgentRolloutOptions<Task>,
): Promise<MultiAgentRolloutResult> {
  const { seeds, groupSize = 1, maxTurns = 10, maxNewTokens = 64, concurrency = 64 } = options;
  for (const [name, value] of Object.entries({ groupSize, maxTurns, maxNewTokens, concurrency }))
    if (!Number.isInteger(value) || value < 1)
      throw new InvalidArgumentError(`${name} must be a positive integer, got ${value}`, { [name]: value });
  if (options.tasks !== undefined && options.tasks.length !== seeds.length)
    throw new InvalidArgumentError(
      `tasks (${options.tasks.length}) and seeds (${seeds.length}) must have the same length`,
    );
  const settings: MultiAgentSettings = { maxTurns, maxNewTokens, instructions: options.instructions ?? true };
  const now = options.now ?? (() => performance.now());
  const started = now();
  const total = seeds.length * groupSize;
  const finished = new Array<{ trajectory: Trajectory; start: EpisodeStart }[]>(total);
  const outcomes = new Array<EpisodeOutcome>(total);
  const samplingRng = new Rng(options.samplingSeed ?? 0);
  const closing: Promise<void>[] = [];
  let nextIndex = 0;
  let completed = 0;
  let live: MultiAgentEpisode[] = [];
  const finish = (state: MultiAgentEpisode): void => {
    if (state.env.close !== undefined) closing.push(state.env.close());
    finished[state.index] = finishMultiAgentEpisode(state);
    outcomes[state.index] = state.outcome;
    completed++;
    options.onEpisode?.(state.outcome, { completed, total });
  };
  while (completed < total) {
    const starting: Promise<MultiAgentEpisode>[] = [];
    while (live.length + starting.length < concurrency && nextIndex < total)
      starting.push(startAt(nextIndex++, options, groupSize, settings));
    for (const state of await Promise.all(starting)) {
      if (state.ended) finish(state);
      else live.push(state);
    }
    if (live.length === 0) continue;
    await playTurn(live, settings, sampling(options, maxNewTokens), samplingRng.nextUint32());
    for (const state of live) if (state.ended) finish(state);
    live = live.filter((state) => !state.ended);
    await Promise.all(closing.splice(0));
  }
  await Promise.all(closing.splice(0));
  const flat = finished.flat();
  const trajectories = flat.map((entry) => entry.trajectory);
  return {
    trajectories,
    episodes: flat.map((entry) => entry.start),
    outcomes,
    stats: rolloutStats(trajectories, (now() - started) / 1000),
  };
}

function sampling<Task>(options: MultiAgentRolloutOptions<Task>, maxNewTokens: number) {
  return {
    maxNewTokens,
    temperature: options.temperature ?? 1,
    topP: options.topP ?? 1,
    stopStrings: options.stopStrings ?? [],
  };
}

function startAt<Task>(
  index: number,
  options: MultiAgentRolloutOptions<Task>,
  groupSize: number,
  settings: MultiAgentSettings,
): Promise<MultiAgentEpisode> {
  const taskIndex = Math.floor(index / groupSize);
  const seed = at(options.seeds, taskIndex, 'seeds');
  const env = options.env() as Env;
  const groupId = options.tasks === undefined ? `${env.name}:${seed}` : `${env.name}:${seed}:task${taskIndex}`;
  const players = typeof options.players === 'function' ? options.players({ index, taskIndex, seed }) : options.players;
  const episode = { index, seed, task: options.tasks?.[taskIndex], groupId };
  return startMultiAgentEpisode(env, episode, options.roles, players, settings);
}

/**
 * One turn of every live episode: ONE `generateBatch` per distinct policy among the acting seats
 * (or one `generateAcross` for forks of one base), the experts' replies for the rest.
 */
async function playTurn(
  live: readonly MultiAgentEpisode[],
  settings: MultiAgentSettings,
  request: { maxNewTokens: number; temperature: number; topP: number; stopStrings: readonly string[] },
  turnSeed: number,
): Promise<void> {
  const byPolicy = new Map<Policy, { state: MultiAgentEpisode; seat: PolicySeat }[]>();
  for (const state of live) {
    const seat = state.seats.get(state.acting);
    if (seat === undefined) continue;
    const batch = byPolicy.get(seat.policy) ?? [];
    batch.push({ state, seat });
    byPolicy.set(seat.policy, batch);
  }
  const batches = [...byPolicy].map(([policy, batch]) => ({
    policy,
    batch,
    requests: batch.map(({ seat }) => ({
      prompt: seat.prompt,
      ...request,
      stopTokens: seat.stopTokens,
      seed: turnSeed,
    })),
  }));
  const replies =
    (await generateAcrossForks(batches)) ??
    (await Promise.all(batches.map(({ policy, requests }) => policy.generateBatch(requests))));
  const generations = new Map<MultiAgentEpisode, Generation>();
  batches.forEach(({ batch }, b) => {
    batch.forEach(({ state }, i) => {
      generations.set(state, at(at(replies, b, 'replies'), i, 'generations'));
    });
  });
  await Promise.all(live.map((state) => playMultiAgentTurn(state, generations.get(state), settings)));
}
