/**
 * Records an RL run into the run store through `runRl`'s hooks, without touching the trainer:
 * `onTrajectories` and `onAdvantages` collect the iteration's episodes and the advantages the
 * update used; `commit` (called from `onIteration`) writes the iteration's metrics, trajectories,
 * validation result and resumable state (weights, AdamW moments, step counter, RNG) in ONE
 * transaction. A process killed mid-iteration therefore loses that iteration and nothing else,
 * and `loadResumePoint` finds the state to continue from.
 */
import type { Trajectory } from '../core/types.ts';
import type { TransformerModel } from '../model/model.ts';
import { byteTokenizer, type Tokenizer } from '../model/tokenizer.ts';
import { tokenPieces } from '../model/token-text.ts';
import { messagesFromTokens } from '../policy/scripted-policy.ts';
import type { RunStore } from '../store/run-store.ts';
import type { TrajectoryRecord } from '../store/types.ts';
import type { IterationMetrics, RlResumeState, RlRunOptions } from './rl.ts';
import { captureTrainerState, parseTrainerState, restoreModel, serializeTrainerState } from './trainer-state.ts';

export interface RunRecorderOptions {
  store: RunStore;
  runId: number;
  tokenizer?: Tokenizer;
  /** Trajectories kept per iteration (the first N of the batch); -1 = all. */
  trajectoriesPerIteration?: number;
  /** Validation episodes (recorded with the validation success). */
  validationEpisodes?: number;
}

export class RunRecorder {
  private readonly options: Required<Omit<RunRecorderOptions, 'validationEpisodes'>> & { validationEpisodes?: number };
  private sampled: readonly Trajectory[] = [];
  private advantages = new Map<Trajectory, Float64Array>();

  constructor({ tokenizer = byteTokenizer, trajectoriesPerIteration = -1, ...rest }: RunRecorderOptions) {
    this.options = { tokenizer, trajectoriesPerIteration, ...rest };
  }

  /** The `runRl` hooks that collect each iteration's data. */
  hooks(): Pick<RlRunOptions<unknown>, 'onTrajectories' | 'onAdvantages'> {
    return {
      onTrajectories: (trajectories) => {
        this.sampled = trajectories;
        this.advantages = new Map();
      },
      onAdvantages: (trajectories, advantages) => {
        trajectories.forEach((t, i) => this.advantages.set(t, advantages[i]!));
      },
    };
  }

  /** The run's starting weights (the KL reference), kept for resuming. */
  async recordStart(model: TransformerModel, extra: { path?: string; testSuccess?: number; testEpisodes?: number } = {}): Promise<void> {
    const state = serializeTrainerState(await captureTrainerState(model, { optimizer: false }));
    const { store, runId } = this.options;
    store.transaction(() => {
      store.addCheckpoint(runId, { step: 0, kind: 'start', path: extra.path, state });
      if (extra.testSuccess !== undefined) store.addEvaluation(runId, { step: 0, split: 'test', episodes: extra.testEpisodes ?? 0, success: extra.testSuccess });
    });
  }

  /** Commits one finished iteration (call from `onIteration`). */
  async commit(model: TransformerModel, metrics: IterationMetrics, state: RlResumeState, { checkpointPath }: { checkpointPath?: string } = {}): Promise<void> {
    const resumeState = serializeTrainerState(await captureTrainerState(model, { rl: state }));
    const { iteration, validationSuccess, ...values } = metrics;
    const limit = this.options.trajectoriesPerIteration;
    const kept = limit < 0 ? this.sampled : this.sampled.slice(0, limit);
    this.options.store.recordStep(this.options.runId, {
      step: iteration,
      metrics: validationSuccess === undefined ? values : { ...values, validationSuccess },
      trajectories: kept.map((t, index) => this.trajectoryRecord(t, index)),
      evaluations:
        validationSuccess === undefined ? [] : [{ split: 'validation', episodes: this.options.validationEpisodes ?? 0, success: validationSuccess }],
      checkpoint: { kind: 'resume', path: checkpointPath, state: resumeState },
    });
  }

  private trajectoryRecord(t: Trajectory, index: number): Omit<TrajectoryRecord, 'step'> {
    const { tokenizer } = this.options;
    const advantages = this.advantages.get(t);
    return {
      index,
      groupId: t.groupId,
      seed: t.seed,
      totalReward: t.totalReward,
      success: t.success,
      truncated: t.truncated,
      messages: messagesFromTokens(t.tokens, tokenizer, { includeUnfinished: true }),
      tokens: t.tokens,
      pieces: tokenPieces(t.tokens, tokenizer),
      lossMask: t.lossMask,
      logprobs: t.logprobs,
      rewards: t.tokenRewards,
      advantages: advantages === undefined ? null : Array.from(advantages),
      turns: t.turns.map(({ start, end, reward, action, observation, invalidAction }) => ({ start, end, reward, action, observation, invalidAction })),
    };
  }
}

export interface ResumePoint {
  model: TransformerModel;
  /** The run's starting weights (the KL reference). */
  reference: TransformerModel;
  /** The trainer state after the last committed iteration; undefined before the first one (RL starts from the start weights). */
  resume?: RlResumeState;
}

/**
 * The newest resumable state of a run: the model (weights, optimizer, step counter), the frozen
 * reference, and the trainer state — or, when no iteration was committed yet, the start weights
 * with a fresh optimizer (as RL starts). Rows recorded after it (none, when every iteration
 * commits its state) are removed so the continued run records those steps afresh. Undefined when
 * the run has no start state (it stopped in its warm start).
 */
export async function loadResumePoint(store: RunStore, runId: number): Promise<ResumePoint | undefined> {
  const start = store.latestCheckpoint(runId, 'start');
  if (start === undefined) return undefined;
  const latest = store.latestCheckpoint(runId, 'resume');
  const source = `${store.path} run ${runId} checkpoint`;
  const startState = parseTrainerState(store.checkpointState(start.id), { source: `${source} ${start.id}` });
  const reference = await restoreModel(startState);
  if (latest === undefined) {
    store.truncateAfter(runId, 0);
    return { model: await restoreModel(startState), reference };
  }
  const state = parseTrainerState(store.checkpointState(latest.id), { source: `${source} ${latest.id}` });
  store.truncateAfter(runId, latest.step);
  return { model: await restoreModel(state), reference, resume: state.rl! };
}
