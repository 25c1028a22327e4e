/**
 * One iteration's policy update, through the `TrainablePolicy` contract: score the kept
 * trajectories (reference `logprobs` at the rollout temperature, `values` from the value head),
 * compute advantages per the preset (token level for whole conversations, turn level for
 * bounded-history segments), then minibatch epochs of the composite loss, each minibatch one
 * optimizer step at the rollout temperature (`policyStep`: the fused `trainStep` when present). Every optimizer step's loss and global gradient norm must be finite: the first
 * that is not throws `NonFiniteError`, before the iteration reaches `onIteration`. With the
 * off-policy correction on (`offPolicyCorrection`, rl-update-off-policy.ts) the samples are first
 * re-scored by the trainer and weighted; its `offPolicy/*` metrics come back in `scalars`.
 */
import { NonFiniteError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { Rng } from '../core/rng.ts';
import type { Trajectory } from '../core/types.ts';
import { rlLoss, turnLevelAdvantages, type CreditEpisode, type CreditTurn } from '../algorithms/index.ts';
import type { ReferencePolicy, StepReport, TrainablePolicy } from '../policy/types.ts';
import { activeKl, klInRewardOf, lossConfig, type AlgorithmPreset } from './algorithm-presets.ts';
import { computeAdvantages } from './advantages.ts';
import { correctSamples, updateCorrection } from './rl-update-off-policy.ts';
import { policyStep } from './policy-step.ts';
import type { RlConfig, UpdateMetrics } from './rl.ts';

export interface UpdateReport extends UpdateMetrics {
  tokensPerSecond: number;
  /** `offPolicy/*` metrics when the off-policy correction was on. */
  scalars?: Record<string, number>;
}

/** What an update trains on, and the KL to the reference taken off its rewards (placement 'reward'). */
export interface TrainingSamples {
  samples: TrainingSample[];
  rewardKl?: number;
}

/** One sequence the update trains on, with everything the loss fixes. */
export interface TrainingSample {
  tokens: number[];
  lossMask: number[];
  oldLogprobs: ArrayLike<number>;
  refLogprobs?: ArrayLike<number>;
  advantages: ArrayLike<number>;
  returns?: ArrayLike<number>;
  oldValues?: ArrayLike<number>;
  /** Off-policy weights w = π_old/π_behav (truncated or masked) multiplying each token's policy loss; set by the correction. */
  importanceWeights?: ArrayLike<number>;
}

export interface UpdateOptions {
  policy: TrainablePolicy;
  reference: ReferencePolicy | undefined;
  /** The kept trajectories (each with at least one policy token). */
  trajectories: Trajectory[];
  preset: AlgorithmPreset;
  config: RlConfig;
  iteration: number;
  learningRate: number;
  /** The minibatch-shuffle RNG (part of the resume state). */
  rng: Rng;
  /** The samples the update trains on, before the first step (for run stores). */
  onSamples?: (samples: TrainingSample[]) => void | Promise<void>;
  /**
   * False when the trajectories came from another engine than `policy` (an asynchronous run's
   * separate `sampler`): turns the correction on under 'auto'. Default `policy.samplerMatchesTrainer`.
   */
  samplerMatchesTrainer?: boolean;
}

/** The samples of the update (after `onSamples`, corrected when the off-policy correction is on) and its `offPolicy/*` metrics. */
async function updateSamples(
  options: UpdateOptions,
): Promise<TrainingSamples & { corrected: boolean; scalars?: Record<string, number> }> {
  const { policy, reference, trajectories, preset, config } = options;
  const segmented = trajectories.every((t) => t.segments !== undefined);
  const sampled = segmented
    ? await turnLevelSamples(policy, reference, trajectories, preset, config)
    : await tokenLevelSamples(policy, reference, trajectories, preset, config);
  await options.onSamples?.(sampled.samples);
  const correction = config.offPolicyCorrection;
  const method = updateCorrection(correction, policy, trajectories, options.iteration, options.samplerMatchesTrainer);
  if (method === null) return { ...sampled, corrected: false };
  const { samples, scalars } = await correctSamples(policy, sampled.samples, method, correction, config.temperature);
  return { samples, rewardKl: sampled.rewardKl, corrected: true, scalars };
}

export async function updatePolicy(options: UpdateOptions): Promise<UpdateReport> {
  const { policy, preset, config, iteration, learningRate, rng } = options;
  const started = performance.now();
  const { samples, rewardKl, corrected, scalars } = await updateSamples(options);
  const klInLoss = activeKl(preset)?.placement === 'loss';
  const loss = lossConfig(preset);
  const totals = {
    loss: 0,
    pgLoss: 0,
    lossKl: 0,
    ppoKl: 0,
    approxKl: 0,
    entropy: 0,
    clipfrac: 0,
    gradNorm: 0,
    steps: 0,
  };
  let tokens = 0;
  for (let epoch = 0; epoch < config.epochs; epoch++) {
    const order = rng.shuffle(samples.map((_, i) => i));
    for (let start = 0; start < order.length; start += config.minibatchSize) {
      const batch = order.slice(start, start + config.minibatchSize).map((i) => at(samples, i, 'samples'));
      const tokenLoss = rlLoss({
        oldLogprobs: batch.map((b) => b.oldLogprobs),
        refLogprobs: klInLoss ? batch.map((b) => b.refLogprobs!) : undefined,
        advantages: batch.map((b) => b.advantages),
        lossMask: batch.map((b) => b.lossMask),
        returns: preset.valueHead ? batch.map((b) => b.returns!) : undefined,
        oldValues: preset.valueHead ? batch.map((b) => b.oldValues!) : undefined,
        importanceWeights: corrected ? batch.map((b) => b.importanceWeights!) : undefined,
        config: loss,
      });
      const report = await policyStep(
        policy,
        { sequences: batch.map((b) => b.tokens), temperature: config.temperature },
        tokenLoss,
        {
          learningRate,
          maxGradNorm: config.maxGradNorm,
        },
      );
      assertFinite(report, iteration, policy.capabilities.gradientClipping);
      tokens += batch.reduce((n, b) => n + b.tokens.length, 0);
      totals.loss += report.loss;
      totals.pgLoss += report.metrics.pg_loss ?? 0;
      totals.lossKl += report.metrics.kl ?? 0;
      totals.ppoKl += report.metrics.ppo_kl ?? 0;
      totals.approxKl += report.metrics.approx_kl ?? 0;
      totals.entropy += report.metrics.entropy ?? NaN;
      totals.clipfrac += report.metrics.clipfrac ?? 0;
      totals.gradNorm += report.gradNorm;
      totals.steps++;
    }
  }
  const n = Math.max(1, totals.steps);
  return {
    loss: totals.loss / n,
    pgLoss: totals.pgLoss / n,
    klToReference: klInLoss ? totals.lossKl / n : (rewardKl ?? 0),
    ppoKl: totals.ppoKl / n,
    approxKl: totals.approxKl / n,
    entropy: totals.entropy / n,
    clipfrac: totals.clipfrac / n,
    gradNorm: totals.gradNorm / n,
    tokensPerSecond: tokens / ((performance.now() - started) / 1000),
    ...(scalars ? { scalars } : {}),
  };
}

/**
 * A NaN or infinite loss or gradient norm stops training (it would otherwise train on silently).
 * A backend that cannot clip may not compute the norm at all (NaN = not reported): only its loss is checked.
 */
function assertFinite(report: StepReport, iteration: number, reportsGradNorm: boolean): void {
  if (!Number.isFinite(report.loss))
    throw new NonFiniteError({ iteration, quantity: 'loss', value: report.loss, optimizerStep: report.step });
  if (reportsGradNorm && !Number.isFinite(report.gradNorm))
    throw new NonFiniteError({
      iteration,
      quantity: 'gradient norm',
      value: report.gradNorm,
      optimizerStep: report.step,
    });
}

function usesReference(reference: ReferencePolicy | undefined, preset: AlgorithmPreset): reference is ReferencePolicy {
  return reference !== undefined && activeKl(preset) !== null;
}

/** Whole-conversation trajectories: token-level advantages (rewards on each turn's last token). */
async function tokenLevelSamples(
  policy: TrainablePolicy,
  reference: ReferencePolicy | undefined,
  trajectories: Trajectory[],
  preset: AlgorithmPreset,
  config: RlConfig,
): Promise<TrainingSamples> {
  const sequences = trajectories.map((t) => t.tokens);
  const refLogprobs = usesReference(reference, preset)
    ? await reference.logprobs({ sequences, temperature: config.temperature })
    : undefined;
  const values = preset.valueHead ? await policy.values!({ sequences }) : undefined;
  const { advantages, returns, rewardKl } = computeAdvantages(
    trajectories.map((t, i) => ({
      lossMask: t.lossMask,
      tokenRewards: t.tokenRewards,
      groupId: t.groupId,
      oldLogprobs: t.logprobs,
      refLogprobs: refLogprobs?.[i],
      values: values?.[i],
    })),
    preset,
    { gamma: config.gamma, lambda: config.lambda },
  );
  const samples = trajectories.map((t, i) => ({
    tokens: t.tokens,
    lossMask: t.lossMask,
    oldLogprobs: t.logprobs,
    refLogprobs: refLogprobs?.[i],
    advantages: at(advantages, i, 'advantages'),
    returns: returns?.[i],
    oldValues: values?.[i],
  }));
  return { samples, rewardKl };
}

/**
 * Bounded-history trajectories: one sample per turn, credited at turn level
 * (../algorithms/advantages/turn-level.ts: reward r_k, the value head at the turn's first generated
 * token, KL in the reward over the turn's tokens); each turn's advantage and return are broadcast
 * over its segment's generated tokens.
 */
export async function turnLevelSamples(
  policy: Pick<TrainablePolicy, 'values'>,
  reference: ReferencePolicy | undefined,
  trajectories: Trajectory[],
  preset: AlgorithmPreset,
  config: RlConfig,
): Promise<TrainingSamples> {
  // Turn k of episode e is sample i of this flat list; all turns are scored in one call.
  const turns = trajectories.flatMap((trajectory, e) =>
    trajectory.segments!.map((segment, k) => ({ trajectory, segment, e, k })),
  );
  const sequences = turns.map(({ segment }) => segment.tokens);
  const refLogprobs = usesReference(reference, preset)
    ? await reference.logprobs({ sequences, temperature: config.temperature })
    : undefined;
  const values = preset.valueHead ? await policy.values!({ sequences }) : undefined;
  const creditTurns: CreditTurn[][] = trajectories.map(() => []);
  turns.forEach(({ trajectory, segment, e }, i) => {
    const turn: CreditTurn = { reward: at(trajectory.turns, segment.turn, 'turns').reward };
    if (values) turn.value = at(at(values, i, 'values'), Math.max(0, segment.lossMask.indexOf(1)), 'segment values');
    if (refLogprobs)
      turn.kl = {
        logprobs: segment.logprobs,
        refLogprobs: at(refLogprobs, i, 'reference log-probs'),
        lossMask: segment.lossMask,
      };
    at(creditTurns, e, 'episodes').push(turn);
  });
  const episodes: CreditEpisode[] = trajectories.map((trajectory, e) => ({
    groupId: trajectory.groupId,
    turns: at(creditTurns, e, 'episodes'),
  }));
  const { advantages, returns, rewardKl } = turnLevelAdvantages(episodes, {
    estimator: preset.advantage,
    gamma: config.gamma,
    lambda: config.lambda,
    klInReward: klInRewardOf(preset),
    turnWeighting: config.turnWeighting,
  });
  const samples = turns.map(({ segment, e, k }, i) => {
    const broadcast = (value: number) => Float64Array.from(segment.lossMask, (m) => (m === 1 ? value : 0));
    return {
      tokens: segment.tokens,
      lossMask: segment.lossMask,
      oldLogprobs: segment.logprobs,
      refLogprobs: refLogprobs?.[i],
      advantages: broadcast(at(at(advantages, e, 'episode advantages'), k, 'turn advantages')),
      returns: returns ? broadcast(at(at(returns, e, 'episode returns'), k, 'turn returns')) : undefined,
      oldValues: values?.[i],
    };
  });
  return { samples, rewardKl };
}
