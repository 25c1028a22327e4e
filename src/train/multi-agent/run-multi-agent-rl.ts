/**
 * Multi-agent RL with a policy per role (issue 33): every iteration rolls out the env with each
 * role played by its own policy (multiAgentRollout: one generate call per distinct policy per turn),
 * then updates each trained policy on the trajectories of the roles it plays — advantages per
 * role, since a role's trajectories are grouped under `<env>:<seed>/<role>` (group baselines never
 * mix roles) — with its own minibatch RNG and, being its own `TrainablePolicy`, its own optimizer
 * state. The same update as `runRl` (rl-update.ts: the algorithm preset, KL to the role's
 * reference, epochs, minibatches). Optionally a league (league.ts): past selves frozen every k
 * iterations, opponents drawn from the pools, win rates recorded, and progress measured against
 * a fixed opponent at each validation. Each role's reward components (`role/<role>/reward/<name>`)
 * and, with `monitor`, its own reward-hacking monitor (`role/<role>/monitor/<signal>`).
 *
 *   await runMultiAgentRl({
 *     env: () => makeNegotiation(), roles: negotiationRoles(),
 *     players: { alice: { policy: alicePolicy }, bob: { policy: bobPolicy } },
 *     config: { algo: 'grpo', iterations: 20 },
 *     league: { snapshotEvery: 5 }, restoreSnapshot: (state) => BuiltinPolicy.fromState(state),
 *   });
 */
import { InvalidArgumentError } from '../../core/errors.ts';
import { Rng, type RngState } from '../../core/rng.ts';
import type { Env, Trajectory } from '../../core/types.ts';
import type { RoleSpec } from '../../envs/role-spec.ts';
import { splitSeeds } from '../../envs/split.ts';
import { multiAgentRollout, type RolePlayer } from '../../rollout/multi-agent-rollout.ts';
import { activeKl } from '../algorithm-presets.ts';
import { isValidationIteration } from '../loop-config.ts';
import { requireCapabilities } from '../policy-step.ts';
import { iterationSeeds } from '../rl-collect.ts';
import { iterationLearningRate } from '../rl-iteration-inputs.ts';
import {
  effectivePreset,
  rlConfigSchema,
  type IterationMetrics,
  type RlConfig,
  type RlConfigInput,
  type TrainingWarning,
} from '../rl.ts';
import type { RewardMonitor } from '../../rewards/monitor/index.ts';
import { watchRoles } from './role-monitor.ts';
import { League, leagueConfigSchema, type LeagueState } from './league.ts';
import { rolePlayer, trainersOf, type RoleAssignment, type Trainer } from './role-players.ts';
import { roleLineups, trainRoles } from './role-iteration.ts';
import { evaluateRoles, evaluationScalars } from './role-evaluation.ts';
import { SnapshotPool, type RestoreSnapshot } from './snapshot-pool.ts';
import type { z } from 'zod';

/** The trainer's state after an iteration (the trained policies' own `saveState` travel beside it). */
export interface MultiAgentResumeState {
  iteration: number;
  /** Each trainer's minibatch-shuffle RNG, by trainer name. */
  rngStates: Record<string, RngState>;
  league?: LeagueState;
}

/** What resuming after an iteration needs besides each trained policy's own state. */
export interface MultiAgentCheckpoint {
  state: MultiAgentResumeState;
  /** The league snapshots' weights by id. */
  snapshots: ReadonlyMap<string, Uint8Array>;
}

export interface MultiAgentRlOptions<Task> {
  env: () => Env<Task>;
  roles: RoleSpec;
  /** role → trained policy (with its KL reference), frozen policy or expert. */
  players: Readonly<Record<string, RoleAssignment>>;
  config?: RlConfigInput;
  league?: z.input<typeof leagueConfigSchema>;
  /** A frozen policy from a trained role's `saveState` bytes: league snapshots (required with a league). */
  restoreSnapshot?: RestoreSnapshot;
  /** Who plays each other role when a trained role is measured (default: the league's start snapshot, a frozen role's own player). */
  fixedOpponents?: Readonly<Record<string, RolePlayer>>;
  /** Continue after a finished iteration (the trained policies must already hold its weights and optimizer state). */
  resume?: MultiAgentCheckpoint;
  onIteration?: (metrics: IterationMetrics, checkpoint: MultiAgentCheckpoint) => void | Promise<void>;
  /** Every iteration's live trajectories (role set), before the updates. */
  onTrajectories?: (trajectories: readonly Trajectory[], iteration: number) => void | Promise<void>;
  /** Per-token advantages each trainer's update trains on, aligned with its trajectories' `tokens` (for run stores). */
  onAdvantages?: (
    trajectories: readonly Trajectory[],
    advantages: readonly Float64Array[],
    iteration: number,
  ) => void | Promise<void>;
  shouldStop?: () => boolean;
  /**
   * The reward-hacking monitor per role (role-monitor.ts): called once per policy-played role, each
   * role's monitor keeps its own history; `role/<role>/monitor/<signal>` metrics, warnings naming
   * the role, and in mode 'stop' a fired signal ends the run after its iteration.
   */
  monitor?: (role: string) => RewardMonitor;
  /** Warnings (a role's reward-hacking signals). Default: console.warn. */
  onWarning?: (warning: TrainingWarning) => void;
}

export interface MultiAgentRlResult {
  history: IterationMetrics[];
  /** The trainers' names (`alice`, `bob`; `alice+bob` for a shared policy). */
  trainers: string[];
  /** Why the run ended before its last iteration, when a role's reward-hacking monitor (mode 'stop') ended it. */
  stopReason?: string;
}

export async function runMultiAgentRl<Task>(options: MultiAgentRlOptions<Task>): Promise<MultiAgentRlResult> {
  const config = rlConfigSchema.parse(options.config ?? {});
  const preset = effectivePreset(config);
  checkConfig(config);
  const trainers = trainersOf(options.roles, options.players);
  for (const trainer of trainers) checkTrainer(trainer, config);
  const league = new League(
    leagueConfigSchema.parse(options.league ?? {}),
    trainers.flatMap((t) => t.roles),
    options.resume?.state.league,
  );
  if (league.enabled && options.restoreSnapshot === undefined)
    throw new InvalidArgumentError('a league (snapshotEvery > 0) needs restoreSnapshot to play frozen past selves');
  const pool = new SnapshotPool(league, options.restoreSnapshot, options.resume?.snapshots);
  const rngs = new Map(
    trainers.map((t, i) => [t, new Rng(options.resume?.state.rngStates[t.name] ?? config.seed + i)] as const),
  );
  if (league.enabled && options.resume === undefined) for (const trainer of trainers) await pool.take(trainer, 0);
  const monitors = roleMonitors(options);
  // The env's components spec lets format-only-reward tell format from outcome terms.
  const rewardSpec = monitors.size === 0 ? undefined : options.env().rewardComponents;
  const warn =
    options.onWarning ?? ((warning: TrainingWarning) => console.warn(`agentrl: warning: ${warning.message}`));
  let stopReason: string | undefined;
  const history: IterationMetrics[] = [];
  for (let iteration = (options.resume?.state.iteration ?? 0) + 1; iteration <= config.iterations; iteration++) {
    const started = performance.now();
    const seeds = iterationSeeds(config.seed, iteration, config.tasksPerIteration);
    const matchups = league.matchups(
      seeds.length,
      options.roles.roles,
      new Rng(config.seed * 7919 + iteration * 31 + 17),
    );
    const lineups = await roleLineups(options.players, matchups, pool);
    const { metrics, outcomes, live } = await trainRoles({
      options,
      config,
      preset,
      trainers,
      rngs,
      iteration,
      seeds,
      matchups,
      lineups,
      learningRate: iterationLearningRate(config, iteration),
      started,
    });
    metrics.scalars = { ...metrics.scalars, ...league.record(outcomes, matchups, config.groupSize) };
    if (league.snapshotDue(iteration)) for (const trainer of trainers) await pool.take(trainer, iteration);
    const stopping = options.shouldStop?.() === true;
    if (isValidationIteration(config, iteration, stopping)) await validateRoles(options, config, league, pool, metrics);
    stopReason = watchRoles(monitors, trainers, metrics, live, warn, rewardSpec);
    history.push(metrics);
    const rngStates = Object.fromEntries(
      trainers.flatMap((t) => {
        const rng = rngs.get(t);
        return rng === undefined ? [] : [[t.name, rng.state()]];
      }),
    );
    const state: MultiAgentResumeState = {
      iteration,
      rngStates,
      ...(league.enabled ? { league: league.state() } : {}),
    };
    await options.onIteration?.(metrics, { state, snapshots: pool.stateBytes() });
    if (stopping || stopReason !== undefined) break;
  }
  return { history, trainers: trainers.map((t) => t.name), ...(stopReason === undefined ? {} : { stopReason }) };
}

/** One monitor per role a policy plays (a scripted expert's role has no trajectories to read). */
function roleMonitors<Task>(options: MultiAgentRlOptions<Task>): Map<string, RewardMonitor> {
  const monitors = new Map<string, RewardMonitor>();
  if (options.monitor === undefined) return monitors;
  for (const role of options.roles.roles) {
    const assignment = options.players[role];
    if (assignment !== undefined && !('expert' in assignment)) monitors.set(role, options.monitor(role));
  }
  return monitors;
}

function checkConfig(config: RlConfig): void {
  if (config.async.maxStaleness > 0)
    throw new InvalidArgumentError('multi-agent training is synchronous: set async.maxStaleness 0');
  if (config.historyTurns !== 'all')
    throw new InvalidArgumentError(
      `multi-agent training shows each role its whole conversation: set historyTurns 'all' (got ${config.historyTurns})`,
    );
  if (config.curriculumPool > 0)
    throw new InvalidArgumentError('multi-agent training draws fresh tasks: set curriculumPool 0');
}

function checkTrainer(trainer: Trainer, config: RlConfig): void {
  const preset = effectivePreset(config);
  requireCapabilities(trainer.policy, {
    what: `algorithm ${config.algo} (role ${trainer.name})`,
    valueHead: preset.valueHead,
    entropyCoef: preset.loss.entropyCoef ?? 0,
    maxGradNorm: config.maxGradNorm,
  });
  const kl = activeKl(preset);
  if (kl !== null && trainer.reference === undefined)
    throw new InvalidArgumentError(
      `algorithm ${config.algo} uses KL to a reference policy (in the ${kl.placement}): give role ${trainer.name} a reference or set klCoef 0`,
    );
}

/**
 * Validation: each trained role against fixed opponents (`role/<role>/vsFixed/*`; validationSuccess
 * their mean success); without fixed opponents for every other role, all roles live.
 */
async function validateRoles<Task>(
  options: MultiAgentRlOptions<Task>,
  config: RlConfig,
  league: League,
  pool: SnapshotPool,
  metrics: IterationMetrics,
): Promise<void> {
  const roles = options.roles.roles;
  const live: Record<string, RolePlayer> = {};
  for (const role of roles) {
    const assignment = options.players[role];
    if (assignment !== undefined) live[role] = rolePlayer(assignment);
  }
  const fixed: Record<string, RolePlayer> = {};
  for (const role of roles) {
    const given = options.fixedOpponents?.[role];
    const assignment = options.players[role];
    const snapshot = league.fixed(role);
    if (given !== undefined) fixed[role] = given;
    else if (assignment !== undefined && !('policy' in assignment)) fixed[role] = rolePlayer(assignment);
    else if (snapshot !== undefined) fixed[role] = { policy: await pool.policy(snapshot.id, role) };
  }
  const trained = roles.filter((role) => 'policy' in (options.players[role] ?? {}));
  const measurable = trained.every((role) => roles.every((other) => other === role || fixed[other] !== undefined));
  const common = {
    env: options.env,
    roles: options.roles,
    episodes: config.validationEpisodes,
    maxTurns: config.maxTurns,
    maxNewTokens: config.maxNewTokens,
    temperature: config.temperature,
    instructions: config.systemPrompt,
  };
  if (measurable) {
    const evaluation = await evaluateRoles({
      ...common,
      live: Object.fromEntries(trained.flatMap((role) => (live[role] === undefined ? [] : [[role, live[role]]]))),
      opponents: fixed,
    });
    metrics.scalars = { ...metrics.scalars, ...evaluationScalars(evaluation) };
    const successes = Object.values(evaluation).map((e) => e.success);
    metrics.validationSuccess = successes.reduce((a, b) => a + b, 0) / Math.max(1, successes.length);
    return;
  }
  const seeds = splitSeeds('validation', config.validationEpisodes);
  const { outcomes } = await multiAgentRollout({ ...common, players: live, seeds });
  metrics.validationSuccess = outcomes.filter((o) => o.success).length / Math.max(1, outcomes.length);
}
