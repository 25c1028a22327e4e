/**
 * One multi-agent episode: one env, one seat per role (role-seat.ts), and the moves of the loop —
 * `startMultiAgentEpisode` (reset, address the first observation to the acting role),
 * `playMultiAgentTurn` (the acting role's reply steps the env; the step's reward is shared out by
 * the role spec, each share added to that role's latest turn; the next observation goes to the role
 * it names) and `finishMultiAgentEpisode` (one trajectory per role a policy played, with `role`
 * and the components of the steps that paid it, role-seat.ts).
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { Env, Observation, Trajectory } from '../core/types.ts';
import type { Expert } from '../envs/expert.ts';
import type { RoleSpec } from '../envs/role-spec.ts';
import type { Generation } from '../policy/types.ts';
import type { EpisodeStart } from './episode.ts';
import { PolicySeat, seatSettings, type RolePlayer } from './role-seat.ts';

/** How an episode ended, for every role (a scripted expert's included): what league win rates and evaluations read. */
export interface EpisodeOutcome {
  seed: number;
  /** The task's group (`<env>:<seed>`); each role's trajectory is grouped under `<groupId>/<role>`. */
  groupId: string;
  /** Each role's summed reward over the episode. */
  rewards: Record<string, number>;
  success: boolean;
  truncated: boolean;
  /** Turns of all roles together. */
  turns: number;
}

export interface MultiAgentEpisode {
  index: number;
  seed: number;
  task: unknown;
  groupId: string;
  env: Env;
  spec: RoleSpec;
  /** Policy seats by role; a role played by an expert has none. */
  seats: Map<string, PolicySeat>;
  experts: Map<string, Expert>;
  /** The role the current observation asks to act, and that observation. */
  acting: string;
  observation: Observation;
  firstObservation: Observation;
  outcome: EpisodeOutcome;
  ended: boolean;
}

export interface MultiAgentSettings {
  maxTurns: number;
  maxNewTokens: number;
  /** Put `env.instructions` in each policy seat's system message. */
  instructions: boolean;
}

export async function startMultiAgentEpisode(
  env: Env,
  episode: { index: number; seed: number; task: unknown; groupId: string },
  spec: RoleSpec,
  players: Readonly<Record<string, RolePlayer>>,
  settings: MultiAgentSettings,
): Promise<MultiAgentEpisode> {
  const observation = await env.reset(
    episode.task === undefined ? { seed: episode.seed } : { seed: episode.seed, task: episode.task },
  );
  const instructions = settings.instructions ? env.instructions : undefined;
  const seats = new Map<string, PolicySeat>();
  const experts = new Map<string, Expert>();
  for (const role of spec.roles) {
    const player = requirePlayer(players, role, spec);
    if ('policy' in player)
      seats.set(role, new PolicySeat(role, player.policy, seatSettings(player.policy, { ...settings, instructions })));
    else experts.set(role, player.expert({ seed: episode.seed, index: episode.index }));
  }
  const rewards = Object.fromEntries(spec.roles.map((role) => [role, 0]));
  const state: MultiAgentEpisode = {
    ...episode,
    env,
    spec,
    seats,
    experts,
    acting: actingRole(spec, observation),
    observation,
    firstObservation: observation,
    outcome: { seed: episode.seed, groupId: episode.groupId, rewards, success: false, truncated: false, turns: 0 },
    ended: false,
  };
  if (!(seats.get(state.acting)?.observe(observation) ?? true)) end(state, true);
  return state;
}

/** The role asked to act; a role the spec does not name is the env's error, said by name. */
function actingRole(spec: RoleSpec, observation: Observation): string {
  const role = spec.actingRole(observation);
  if (!spec.roles.includes(role))
    throw new InvalidArgumentError(`the env asks role "${role}" to act; its roles are ${spec.roles.join(', ')}`);
  return role;
}

function requirePlayer(players: Readonly<Record<string, RolePlayer>>, role: string, spec: RoleSpec): RolePlayer {
  const player = players[role];
  if (player === undefined)
    throw new InvalidArgumentError(
      `no player for role "${role}": give each of ${spec.roles.join(', ')} a policy or an expert`,
      { role },
    );
  return player;
}

/**
 * Plays the acting role's turn: `generation` when a policy seat acts (else the expert's text),
 * steps the env with the reply text, shares the reward out, ends the episode or addresses the next
 * observation to the role it names.
 */
export async function playMultiAgentTurn(
  state: MultiAgentEpisode,
  generation: Generation | undefined,
  settings: MultiAgentSettings,
): Promise<void> {
  const seat = state.seats.get(state.acting);
  let text: string;
  if (seat !== undefined) {
    if (generation === undefined || !seat.reply(generation)) return end(state, true);
    text = generation.text;
  } else {
    text = requireExpert(state).act(state.observation);
  }
  const result = await state.env.step({ text });
  state.outcome.turns += 1;
  for (const [role, value] of Object.entries(state.spec.stepRewards(result, state.acting))) {
    if (!(role in state.outcome.rewards)) continue;
    state.outcome.rewards[role] = (state.outcome.rewards[role] ?? 0) + value;
    const paid = state.seats.get(role);
    paid?.transcript.reward(value);
    paid?.addRewardComponents(result.info.rewardComponents);
  }
  seat?.transcript.observe(result.observation.text, { invalidAction: result.info.invalidAction === true });
  state.observation = result.observation;
  state.outcome.success = result.info.success === true;
  if (result.done) return end(state, false);
  if (result.truncated || state.outcome.turns >= settings.maxTurns) return end(state, true);
  state.acting = actingRole(state.spec, result.observation);
  if (!(state.seats.get(state.acting)?.observe(result.observation) ?? true)) end(state, true);
}

function requireExpert(state: MultiAgentEpisode): Expert {
  const expert = state.experts.get(state.acting);
  if (expert === undefined) throw new InvalidArgumentError(`role "${state.acting}" has neither a policy nor an expert`);
  return expert;
}

function end(state: MultiAgentEpisode, truncated: boolean): void {
  state.ended = true;
  state.outcome.truncated = truncated;
}

/** One trajectory per role a policy played that took a turn (`role` set, grouped within its role), with its episode start. */
export function finishMultiAgentEpisode(state: MultiAgentEpisode): { trajectory: Trajectory; start: EpisodeStart }[] {
  const { success, truncated } = state.outcome;
  const start: EpisodeStart = {
    prompt: state.firstObservation.text,
    ...(state.task === undefined ? {} : { task: state.task }),
  };
  return [...state.seats.values()]
    .filter((seat) => seat.acted)
    .map((seat) => ({
      trajectory: {
        ...seat.transcript.trajectory({
          success,
          truncated,
          groupId: `${state.groupId}/${seat.role}`,
          seed: state.seed,
        }),
        role: seat.role,
        ...(seat.rewardComponents === undefined ? {} : { rewardComponents: seat.rewardComponents }),
        ...(seat.rewardFailures === undefined ? {} : { rewardFailures: seat.rewardFailures }),
      },
      start,
    }));
}
