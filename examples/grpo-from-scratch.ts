/**
 * GRPO from scratch, in one file: `npx tsx examples/grpo-from-scratch.ts [iterations]` (default 10).
 *
 * Read it top to bottom, like CleanRL's single-file scripts: make an env, make a tiny policy,
 * sample groups of episodes, turn rewards into group-relative advantages, and train the clipped
 * surrogate through the `TrainablePolicy` contract. Everything here comes from agentrl's public
 * API; the two pieces GRPO adds — the advantage and the loss — are written out below.
 *
 *   GRPO: DeepSeekMath, arXiv:2402.03300 (advantage = group-normalised outcome reward)
 *   PPO clipped surrogate: Schulman et al. 2017, arXiv:1707.06347
 *
 * The env is the two-armed bandit: one turn, the reply `<answer>A</answer>` or `<answer>B</answer>`;
 * arm B pays 1 with p 0.8, arm A with p 0.2. A random byte-level model cannot yet write that
 * format, so all rewards would be 0 and GRPO would have nothing to compare: the model is first
 * warm-started (SFT) on imperfect expert replies (80% random arms, ≈60% pick B). GRPO then moves
 * it toward B; a greedy evaluation on held-out test seeds closes the run. The library's own
 * version of each step: `grpoAdvantages` and `ppoClipLoss` (src/algorithms/), `policyStep`
 * (src/train/policy-step.ts), and `runRl({ config: { algo: 'grpo' } })`, which does all of this
 * with KL to a reference, minibatches, validation, resume and run stores.
 */
import {
  BuiltinPolicy,
  InvalidArgumentError,
  TransformerModel,
  evaluate,
  getEnvironment,
  rollout,
  splitSeeds,
  warmStart,
  type TokenLoss,
  type TrainablePolicy,
  type Trajectory,
} from 'agentrl';

// ---- Arguments: a tiny budget by default (examples/examples.test.ts runs this file as written) ----
const iterations = Number(process.argv[2] ?? 10);
if (!(Number.isInteger(iterations) && iterations > 0))
  throw new InvalidArgumentError(`iterations must be a positive integer, got ${process.argv[2]}`);
const tasksPerIteration = 4; // distinct seeds per iteration
const groupSize = 8; // G episodes per seed: the group GRPO normalises over
const updateEpochs = 2; // passes over each batch; from the second on the ratio moves off 1 and the clip can act
const clipEpsilon = 0.2;
const learningRate = 2e-3;
const maxNewTokens = 24; // `<think></think><answer>B</answer><|end|>` fits
const temperature = 1;

// ---- 1. The environment: plain objects implementing `Env`, one per episode ----
const bandit = getEnvironment('bandit');
const makeEnv = () => bandit.make({});

// ---- 2. The policy: a tiny built-in transformer behind the `TrainablePolicy` contract ----
console.log('GRPO from scratch on bandit with a tiny random built-in model, warm-started on imperfect expert replies');
const started = performance.now();
const model = await TransformerModel.create(
  { vocabSize: 272, hiddenSize: 64, numLayers: 2, numHeads: 2, numKvHeads: 1, intermediateSize: 128, maxSeqLen: 64 },
  { seed: 1 },
);
const policy: TrainablePolicy = new BuiltinPolicy({ model });
const warm = await warmStart({
  policy,
  env: makeEnv,
  expert: (seed, randomActionRate) => bandit.expert({ seed, randomActionRate }),
  config: { demonstrations: 64, randomActionRate: 0.8, sftSteps: 60, sftBatchSize: 8, sftLearningRate: 1e-2 },
  maxTurns: 1,
  maxNewTokens,
  instructions: false, // the tiny model learns the format from the demonstrations; instructions would only cost context
});
const demonstrated = (100 * warm.demonstrationSuccess).toFixed(0);
console.log(
  `warm start: SFT loss ${warm.finalLoss.toFixed(3)} on demonstrations that pick the better arm ${demonstrated}% of the time`,
);

// ---- 3. Group-relative advantages: A_i = (R_i − mean of its group) / (std of its group + ε) ----
function groupRelativeAdvantages(trajectories: readonly Trajectory[]): number[] {
  const groups = new Map<string, { index: number; reward: number }[]>(); // groupId → its episodes (the G episodes of one seed share it)
  for (const [index, t] of trajectories.entries()) {
    groups.set(t.groupId, [...(groups.get(t.groupId) ?? []), { index, reward: t.totalReward }]);
  }
  const advantages = new Array<number>(trajectories.length).fill(0);
  for (const members of groups.values()) {
    const rewards = members.map((member) => member.reward);
    const mean = rewards.reduce((sum, reward) => sum + reward, 0) / rewards.length;
    const std = Math.sqrt(rewards.reduce((sum, reward) => sum + (reward - mean) ** 2, 0) / (rewards.length - 1)); // unbiased, as verl
    for (const { index, reward } of members) advantages[index] = (reward - mean) / (std + 1e-6);
  }
  return advantages;
}

// ---- 4. The clipped surrogate, as a `TokenLoss`: the policy hands it the current log-probs ----
// Per generated token t (lossMask 1), with ratio = exp(logp_t − old_t):
//   ℓ_t = max(−A·ratio, −A·clip(ratio, 1 − ε, 1 + ε)),  loss = mean over generated tokens (token-mean)
//   dℓ_t/dlogp_t = −A·ratio where the unclipped branch is taken, else 0 (the clipped term is constant).
// (src/algorithms/losses/ppo-clip.ts adds what this leaves out: a ±20 clamp on the log-ratio, DAPO's
// asymmetric ε, the dual clip, and the other aggregation modes.)
function clippedSurrogate(batch: { lossMask: number[][]; oldLogprobs: number[][]; advantages: number[] }): TokenLoss {
  const tokenCount = batch.lossMask.flat().reduce((sum, mask) => sum + mask, 0);
  return {
    name: 'grpo',
    dependsOnCurrent: true, // the gradient needs the current log-probs (a forward before the backward)
    compute({ logprobs }) {
      let loss = 0;
      let clipped = 0;
      let approxKl = 0;
      const gradLogprobs = logprobs.map((sequence, i) => {
        const gradient = new Float32Array(sequence.length); // [T_i]: 0 on prompt tokens
        const advantage = batch.advantages[i]; // one per episode, broadcast over its reply
        const mask = batch.lossMask[i];
        const old = batch.oldLogprobs[i];
        if (advantage === undefined || mask === undefined || old === undefined)
          throw new RangeError(`no row ${i} in the batch`);
        for (const [t, logprob] of sequence.entries()) {
          const oldLogprob = old[t];
          if (mask[t] !== 1 || oldLogprob === undefined) continue;
          const logRatio = logprob - oldLogprob;
          const ratio = Math.exp(logRatio);
          const unclipped = -advantage * ratio;
          const clippedLoss = -advantage * Math.min(1 + clipEpsilon, Math.max(1 - clipEpsilon, ratio));
          loss += Math.max(unclipped, clippedLoss) / tokenCount;
          gradient[t] = clippedLoss > unclipped ? 0 : (-advantage * ratio) / tokenCount;
          if (clippedLoss > unclipped) clipped++;
          approxKl += (ratio - 1 - logRatio) / tokenCount; // k3 estimate of KL(old ‖ new), as CleanRL
        }
        return gradient;
      });
      return { loss, gradLogprobs, metrics: { clipfrac: clipped / tokenCount, approx_kl: approxKl } };
    },
  };
}

// ---- 5. One optimizer step through the contract: the fused `trainStep` when the backend has one ----
async function trainOn(
  sequences: number[][],
  loss: TokenLoss,
): Promise<{ loss: number; metrics: Record<string, number> }> {
  const batch = { sequences, temperature }; // score at the sampling temperature: the distribution that was sampled
  if (policy.trainStep !== undefined) return policy.trainStep(batch, loss, { learningRate, maxGradNorm: 1 });
  const report = await policy.forwardBackward(batch, loss);
  await policy.optimStep({ learningRate, maxGradNorm: 1 });
  return report;
}

// ---- 6. The loop: sample groups, score them, train, print ----
for (let iteration = 1; iteration <= iterations; iteration++) {
  const { trajectories } = await rollout({
    policy,
    env: makeEnv,
    seeds: splitSeeds('train', tasksPerIteration, (iteration - 1) * tasksPerIteration), // new seeds each iteration
    groupSize,
    maxTurns: 1,
    maxNewTokens,
    temperature,
    instructions: false,
    samplingSeed: iteration,
  });
  const advantages = groupRelativeAdvantages(trajectories);
  // Whole-conversation trajectories: tokens, lossMask (1 = generated) and the sampling log-probs (the "old" policy).
  const batch = {
    lossMask: trajectories.map((t) => t.lossMask),
    oldLogprobs: trajectories.map((t) => t.logprobs),
    advantages,
  };
  const loss = clippedSurrogate(batch);
  let report = { loss: 0, metrics: {} as Record<string, number> };
  for (let epoch = 0; epoch < updateEpochs; epoch++)
    report = await trainOn(
      trajectories.map((t) => t.tokens),
      loss,
    );
  const meanReward = trajectories.reduce((sum, t) => sum + t.totalReward, 0) / trajectories.length;
  const betterArm = trajectories.filter((t) => t.success).length / trajectories.length;
  console.log(
    `iteration ${iteration}: mean reward ${meanReward.toFixed(3)} · picks the better arm ${(100 * betterArm).toFixed(0)}% · ` +
      `loss ${report.loss.toFixed(4)} · clipfrac ${(report.metrics.clipfrac ?? 0).toFixed(3)} · approx_kl ${(report.metrics.approx_kl ?? 0).toFixed(4)}`,
  );
}

// ---- 7. Held-out check: greedy replies on test seeds the policy never trained on ----
const evaluation = await evaluate({
  policy,
  env: makeEnv,
  seeds: splitSeeds('test', 32),
  maxTurns: 1,
  maxNewTokens,
  instructions: false,
});
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(
  `greedy on 32 test seeds: picks the better arm ${(100 * evaluation.successRate).toFixed(0)}% · ${seconds} s`,
);
