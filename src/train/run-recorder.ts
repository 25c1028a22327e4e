/**
 * Records an RL run into the run store through `runRl`'s hooks, without touching the trainer:
 * `onTrajectories` and `onAdvantages` collect the iteration's episodes and the advantages the
 * update used; `commit` (called from `onIteration`) writes the iteration's metrics, trajectories,
 * validation result and resumable state (the policy's `saveState` — for the built-in model its
 * weights, AdamW moments and step counter — and the RNG) in ONE transaction. A process killed mid-iteration therefore loses that iteration and nothing else,
 * and `loadResumePoint` finds the state to continue from.
 */
import type { CountOrAll } from '../core/count-or-all.ts';
import { at } from '../core/indexing.ts';
import type { Trajectory } from '../core/types.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';
import { tokenPieces } from '../chat/token-text.ts';
import { storedMessages } from './stored-messages.ts';
import type { ReferencePolicy, TrainablePolicy } from '../policy/types.ts';
import type { RunStore } from '../store/run-store.ts';
import type { TrajectoryRecord } from '../store/types.ts';
import type { IterationMetrics, RlResumeState, RlRunOptions } from './rl.ts';
import { decodeResumeState, encodeResumeState } from './resume-state.ts';
import { backendTimeMetrics } from './backend-times.ts';
import { episodeStatistics } from './episode-statistics.ts';

export interface RunRecorderOptions {
  store: RunStore;
  runId: number;
  /** Decodes the stored messages and pieces; default the committing policy's own (a model's tokenizer, or the byte one). */
  tokenizer?: Tokenizer;
  /** Trajectories kept per iteration: the first N of the batch, or 'all' (the default). */
  trajectoriesPerIteration?: CountOrAll;
  /** Validation episodes (recorded with the validation success). */
  validationEpisodes?: number;
}

export class RunRecorder {
  private readonly options: Required<Omit<RunRecorderOptions, 'validationEpisodes' | 'tokenizer'>> & {
    validationEpisodes?: number;
    tokenizer?: Tokenizer;
  };
  private sampled: readonly Trajectory[] = [];
  private advantages = new Map<Trajectory, Float64Array>();

  constructor({ trajectoriesPerIteration = 'all', ...rest }: RunRecorderOptions) {
    this.options = { trajectoriesPerIteration, ...rest };
  }

  /** The `runRl` hooks that collect each iteration's data. */
  hooks(): Pick<RlRunOptions<unknown>, 'onTrajectories' | 'onAdvantages'> {
    return {
      onTrajectories: (trajectories) => {
        this.sampled = trajectories;
        this.advantages = new Map();
      },
      onAdvantages: (trajectories, advantages) => {
        trajectories.forEach((t, i) => {
          this.advantages.set(t, at(advantages, i, 'advantages'));
        });
      },
    };
  }

  /** The run's starting weights (the KL reference), kept for resuming. */
  async recordStart(
    policy: TrainablePolicy,
    extra: { path?: string; testSuccess?: number; testEpisodes?: number } = {},
  ): Promise<void> {
    const state = encodeResumeState({ backend: policy.backend, policyState: await policy.saveState() });
    const { store, runId } = this.options;
    store.transaction(() => {
      store.addCheckpoint(runId, { step: 0, kind: 'start', path: extra.path, state });
      if (extra.testSuccess !== undefined)
        store.addEvaluation(runId, {
          step: 0,
          split: 'test',
          episodes: extra.testEpisodes ?? 0,
          success: extra.testSuccess,
        });
    });
  }

  /**
   * Commits one finished iteration (call from `onIteration`): the trainer's metrics plus the
   * sampled episodes' statistics (episode-statistics.ts). Returns the metrics recorded.
   */
  async commit(
    policy: Pick<TrainablePolicy, 'backend' | 'saveState' | 'tokenizer'>,
    metrics: IterationMetrics,
    state: RlResumeState,
    { checkpointPath }: { checkpointPath?: string } = {},
  ): Promise<Record<string, number>> {
    const resumeState = encodeResumeState({
      backend: policy.backend,
      policyState: await policy.saveState(),
      rl: state,
    });
    const { iteration, validationSuccess, backendMs, scalars, ...values } = metrics;
    const limit = this.options.trajectoriesPerIteration;
    const kept = limit === 'all' ? this.sampled : this.sampled.slice(0, limit);
    const recorded: Record<string, number> = {
      ...values,
      ...backendTimeMetrics(backendMs),
      ...scalars,
      ...episodeStatistics(this.sampled),
      ...(validationSuccess === undefined ? {} : { validationSuccess }),
    };
    this.options.store.recordStep(this.options.runId, {
      step: iteration,
      metrics: recorded,
      trajectories: kept.map((t, index) => this.trajectoryRecord(t, index, this.options.tokenizer ?? policy.tokenizer)),
      evaluations:
        validationSuccess === undefined
          ? []
          : [{ split: 'validation', episodes: this.options.validationEpisodes ?? 0, success: validationSuccess }],
      checkpoint: { kind: 'resume', path: checkpointPath, state: resumeState },
    });
    return recorded;
  }

  private trajectoryRecord(t: Trajectory, index: number, tokenizer: Tokenizer): Omit<TrajectoryRecord, 'step'> {
    const advantages = this.advantages.get(t);
    return {
      index,
      groupId: t.groupId,
      seed: t.seed,
      totalReward: t.totalReward,
      success: t.success,
      truncated: t.truncated,
      messages: storedMessages(t.tokens, t.lossMask, tokenizer),
      tokens: t.tokens,
      pieces: tokenPieces(t.tokens, tokenizer),
      lossMask: t.lossMask,
      logprobs: t.logprobs,
      rewards: t.tokenRewards,
      advantages: advantages === undefined ? null : Array.from(advantages),
      turns: t.turns.map(({ start, end, reward, action, observation, invalidAction }) => ({
        start,
        end,
        reward,
        action,
        observation,
        invalidAction,
      })),
      ...(t.rewardComponents === undefined ? {} : { rewardComponents: t.rewardComponents }),
      ...(t.rewardFailures === undefined ? {} : { rewardFailures: t.rewardFailures }),
    };
  }
}

export interface ResumePoint<P extends TrainablePolicy, R extends ReferencePolicy> {
  policy: P;
  /** The run's starting weights (the KL reference). */
  reference: R;
  /** The trainer state after the last committed iteration; undefined before the first one (RL starts from the start weights). */
  resume?: RlResumeState;
}

/** Makes policies holding `saveState` bytes (for the built-in model: `BuiltinPolicy.fromState` for both). */
export interface RestorePolicies<P extends TrainablePolicy, R extends ReferencePolicy> {
  policy: (policyState: Uint8Array) => Promise<P>;
  /** The frozen KL reference, from the run's start state. */
  reference: (policyState: Uint8Array) => Promise<R>;
}

/**
 * The newest resumable state of a run: the policy (weights, optimizer, step counter), the frozen
 * reference, and the trainer state — or, when no iteration was committed yet, the start weights
 * with a fresh optimizer (as RL starts). Rows recorded after it (none, when every iteration
 * commits its state) are removed so the continued run records those steps afresh. Undefined when
 * the run has no start state (it stopped in its warm start).
 */
export async function loadResumePoint<P extends TrainablePolicy, R extends ReferencePolicy>(
  store: RunStore,
  runId: number,
  restore: RestorePolicies<P, R>,
): Promise<ResumePoint<P, R> | undefined> {
  const start = store.latestCheckpoint(runId, 'start');
  if (start === undefined) return undefined;
  const latest = store.latestCheckpoint(runId, 'resume');
  const source = `${store.path} run ${runId} checkpoint`;
  const startState = decodeResumeState(store.checkpointState(start.id), { source: `${source} ${start.id}` });
  const reference = await restore.reference(startState.policyState);
  if (latest === undefined) {
    store.truncateAfter(runId, 0);
    return { policy: await restore.policy(startState.policyState), reference };
  }
  const state = decodeResumeState(store.checkpointState(latest.id), { source: `${source} ${latest.id}` });
  store.truncateAfter(runId, latest.step);
  return { policy: await restore.policy(state.policyState), reference, resume: state.rl! };
}
