/**
 * `agentrl train --env negotiation --policies per-role`: the RL phases with a policy per role
 * (train/multi-agent). Every role starts from the run's start weights (the warm start, saved by
 * train-phases.ts) as its own policy — on the built-in backend its own model (LoRA: its own
 * adapters over ONE shared base, shared-base.ts; the KL reference and league snapshots too), on
 * Tinker its own training client — and is measured before and
 * after RL against the env's scripted expert in the other roles, on held-out test seeds.
 * Each iteration is committed with every role's state and the league (role-checkpoint.ts), so
 * `--resume` restores every role; the `final/<role>` folders hold each role's weights. `--monitor`
 * gives each role its own reward-hacking monitor (`role/<role>/monitor/<signal>`).
 */
import { join } from 'node:path';
import { decodeResumeState } from '../train/resume-state.ts';
import type { ReferencePolicy, TrainablePolicy } from '../policy/types.ts';
import { activeKl } from '../train/algorithm-presets.ts';
import { effectivePreset, rlConfigSchema, type IterationMetrics } from '../train/rl.ts';
import { RunRecorder } from '../train/run-recorder.ts';
import { decodeRoleCheckpoint, encodeRoleCheckpoint } from '../train/multi-agent/role-checkpoint.ts';
import { evaluateRoles, type RoleEvaluation } from '../train/multi-agent/role-evaluation.ts';
import { roleEnvironment } from '../train/multi-agent/role-environments.ts';
import { runMultiAgentRl, type MultiAgentCheckpoint } from '../train/multi-agent/run-multi-agent-rl.ts';
import { sharedBaseRestorer } from '../train/multi-agent/shared-base.ts';
import { CheckpointError, InvalidArgumentError } from '../core/errors.ts';
import type { PolicyBackend } from './backend-setup.ts';
import { Progress } from './progress.ts';
import type { RewardComponentsSpec } from '../core/types.ts';
import { parseMonitorThresholds, rewardMonitor, type RewardMonitor } from '../rewards/monitor/index.ts';
import type { TrainPhasesOptions } from './train-phases.ts';
import { stopStringsMetadata } from '../train/loop-config.ts';

/** What `--policies per-role` cannot run, refused before the run is created: a single-agent env, `--reward`, `--max-minutes`. */
export function checkPerRoleOptions(
  options: Pick<TrainPhasesOptions['options'], 'env' | 'reward' | 'maxMinutes'>,
): void {
  roleEnvironment(options.env);
  if (options.maxMinutes !== undefined)
    throw new InvalidArgumentError(
      '--max-minutes bounds the RL iterations of one policy; a run with --policies per-role stops by --iterations',
      { flag: 'maxMinutes' },
    );
  if (options.reward !== undefined)
    throw new InvalidArgumentError(
      '--policies per-role trains on the env reward each role is paid (--role-reward own|joint); --reward rubrics are not split per role',
    );
}

export async function rolePhases(
  phases: TrainPhasesOptions,
  backend: PolicyBackend,
): Promise<'completed' | 'interrupted'> {
  const { store, run, options, setup, interrupt, dir } = phases;
  const { start, resume } = roleStates(phases);
  const probe = roleEnvironment(options.env, { envOptions: setup.envOptions });
  // In-process LoRA: every role, the KL reference and the league's snapshots are adapters over ONE base.
  const restore = sharedBaseRestorer((state) => backend.restorePolicy(state));
  const policies: Record<string, TrainablePolicy> = {};
  for (const role of probe.roles.roles) policies[role] = await restore(resume?.trainers.get(role) ?? start);
  const config = rlConfigSchema.parse({ ...options, historyTurns: 'all' });
  const reference =
    activeKl(effectivePreset(config)) === null
      ? undefined
      : backend.name === 'builtin'
        ? await restore(start)
        : await backend.restoreReference(start);
  const { env, roles } = roleEnvironment(options.env, {
    envOptions: setup.envOptions,
    roleReward: options.roleReward,
    solver: policies.solver,
  });
  const measure = (split: 'test') =>
    evaluateRoles({
      env,
      roles,
      live: Object.fromEntries(Object.entries(policies).map(([role, policy]) => [role, { policy }])),
      opponents: Object.fromEntries(
        roles.roles.map((role) => [role, { expert: ({ seed }) => setup.descriptor.expert({ seed }) }]),
      ),
      split,
      episodes: options.testEpisodes,
      maxTurns: config.maxTurns,
      maxNewTokens: config.maxNewTokens,
      temperature: config.temperature,
      instructions: config.systemPrompt,
    });
  if (resume === undefined && !store.evaluations(run.id).some((e) => e.step === 0 && e.split === 'test')) {
    interrupt.enter('the held-out test before RL');
    const before = await measure('test');
    store.addEvaluation(run.id, {
      step: 0,
      split: 'test',
      episodes: options.testEpisodes,
      success: meanSuccess(before),
    });
    console.error(`train: before RL, each role against the scripted expert: ${describe(before)}`);
  }
  const done = resume?.state.iteration ?? 0;
  if (done < options.iterations) {
    interrupt.enter('the RL iterations', { graceful: 'finishing this iteration, then saving it' });
    await roleIterations(phases, { env, roles, policies, reference, resume, config, restore });
    if (interrupt.signal !== undefined) return 'interrupted';
  }
  interrupt.enter('the held-out test after RL');
  const after = await measure('test');
  for (const [role, policy] of Object.entries(policies))
    await policy.save(join(dir, 'final', role), {
      metadata: { run: run.name, role, env: options.env, ...stopStringsMetadata(options) },
    });
  store.transaction(() => {
    store.addEvaluation(run.id, {
      step: options.iterations,
      split: 'test',
      episodes: options.testEpisodes,
      success: meanSuccess(after),
    });
    store.addCheckpoint(run.id, { step: options.iterations, kind: 'final', path: join(dir, 'final') });
  });
  console.log(
    `\n${options.env} / ${options.algo} / a policy per role, against the scripted expert after RL: ${describe(after)}; weights in ${join(dir, 'final')}/<role>`,
  );
  return 'completed';
}

/** The run's start state (every role's first weights) and, when resuming, its latest role checkpoint. */
function roleStates({ store, run }: TrainPhasesOptions) {
  const startRow = store.latestCheckpoint(run.id, 'start');
  if (startRow === undefined) throw new CheckpointError(`run ${run.name} has no start state to give its roles`);
  const start = decodeResumeState(store.checkpointState(startRow.id)).policyState;
  const latestRow = store.latestCheckpoint(run.id, 'resume');
  const resume =
    latestRow === undefined
      ? undefined
      : decodeRoleCheckpoint(decodeResumeState(store.checkpointState(latestRow.id)).policyState, {
          source: `run ${run.name} checkpoint ${latestRow.id}`,
        });
  return { start, resume };
}

async function roleIterations(
  { store, run, options, interrupt }: TrainPhasesOptions,
  input: {
    env: () => ReturnType<ReturnType<typeof roleEnvironment>['env']>;
    roles: ReturnType<typeof roleEnvironment>['roles'];
    policies: Record<string, TrainablePolicy>;
    reference: ReferencePolicy | undefined;
    resume: ReturnType<typeof decodeRoleCheckpoint> | undefined;
    config: ReturnType<typeof rlConfigSchema.parse>;
    /** A snapshot's state as a policy (over the roles' base under LoRA). */
    restore: (state: Uint8Array) => Promise<TrainablePolicy>;
  },
): Promise<void> {
  const { policies, reference } = input;
  const recorder = new RunRecorder({
    store,
    runId: run.id,
    trajectoriesPerIteration: options.recordTrajectories,
    validationEpisodes: options.validationEpisodes,
  });
  const hooks = recorder.hooks();
  const progress = new Progress({ label: `rl ${options.algo} per role`, total: options.iterations });
  const first = Object.values(policies)[0];
  if (first === undefined) return;
  const result = await runMultiAgentRl({
    env: input.env,
    roles: input.roles,
    players: Object.fromEntries(Object.entries(policies).map(([role, policy]) => [role, { policy, reference }])),
    config: input.config,
    league: {
      snapshotEvery: options.leagueEvery,
      poolSize: options.leaguePool,
      opponentRate: options.leagueOpponentRate,
    },
    // A league snapshot plays and never learns (on Tinker it is a training client of its own).
    restoreSnapshot: input.restore,
    ...(input.resume === undefined ? {} : { resume: input.resume }),
    ...hooks,
    ...roleMonitor(options, input.env),
    shouldStop: interrupt.stopRequested,
    onIteration: async (metrics: IterationMetrics, checkpoint: MultiAgentCheckpoint) => {
      const trainers = new Map<string, Uint8Array>();
      for (const [role, policy] of Object.entries(policies)) trainers.set(role, await policy.saveState());
      const team = {
        backend: first.backend,
        tokenizer: first.tokenizer,
        saveState: async () => encodeRoleCheckpoint({ ...checkpoint, trainers }),
      };
      // The store's row keeps the iteration in its header; the roles' own RNGs travel in the role checkpoint.
      const rngState = Object.values(checkpoint.state.rngStates)[0] ?? { s: [0, 0, 0, 0] };
      await recorder.commit(team, metrics, { iteration: metrics.iteration, rngState });
      progress.iteration(metrics.iteration, roleFields(metrics));
    },
  });
  progress.done({});
  if (result.stopReason !== undefined) console.error(`train: stopped early: ${result.stopReason}`);
}

/** `--monitor` per role: each role its own reward-hacking monitor over the env's reward components (none when off). */
function roleMonitor(
  options: TrainPhasesOptions['options'],
  env: () => { rewardComponents?: RewardComponentsSpec },
): { monitor?: () => RewardMonitor } {
  if (options.monitor === 'off') return {};
  const thresholds = parseMonitorThresholds(options.monitorThresholds);
  const rewardSpec = env().rewardComponents;
  return {
    monitor: () =>
      rewardMonitor({
        config: { ...thresholds, mode: options.monitor },
        ...(rewardSpec === undefined ? {} : { rewardSpec }),
      }),
  };
}

function meanSuccess(evaluation: Readonly<Record<string, RoleEvaluation>>): number {
  const values = Object.values(evaluation).map((e) => e.success);
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
}

function describe(evaluation: Readonly<Record<string, RoleEvaluation>>): string {
  return Object.entries(evaluation)
    .map(
      ([role, e]) =>
        `${role} reward ${e.reward.toFixed(3)}, win rate ${(e.winRate * 100).toFixed(1)}%, success ${(e.success * 100).toFixed(1)}%`,
    )
    .join('; ');
}

/** The progress line: each role's reward and loss. */
function roleFields(metrics: IterationMetrics): Record<string, number> {
  const fields: Record<string, number> = {};
  for (const [key, value] of Object.entries(metrics.scalars ?? {})) {
    const match = key.match(/^role\/([^/]+)\/(reward|loss)$/);
    if (match !== null) fields[`${match[1]} ${match[2]}`] = value;
  }
  return fields;
}
