/**
 * The TypeScript half of `npm run check:tinker` (run.sh starts the server): a few GRPO iterations
 * of agentrl's bandit env through `TinkerPolicy` against a real Tinker server, then the numbers
 * the tinker SDK witness (sdk-witness.py) must reproduce.
 *
 *   node --import tsx scripts/check-tinker/check.ts --base-url http://127.0.0.1:8765 --base-model /path/model --out witness.json
 *
 * The loop is written here from agentrl's public pieces (rollout with the policy as sampler, GRPO
 * advantages, the ppo-clip rlLoss, forwardBackward / optimStep); it does not go through runRl yet.
 * The model is random, so the env's reward alone is constant (no reply is a valid answer); the
 * score adds a shaping term — the share of the reply's characters that occur in
 * `<answer>B</answer>` — so the groups' rewards vary and GRPO has a gradient.
 *
 * Checks (exit 1 when one fails): the loss is finite; sampled log-probs equal forward log-probs
 * (max |Δ| < 1e-3) before each update; the forward log-probs move after each update (the LoRA
 * weights moved); a second policy that `load`s the saved checkpoint scores the same.
 * Prints the time split per iteration: sampling (with the sampler-weight save), forward +
 * forward_backward, optim_step, and the rest (agentrl's own work: rollout bookkeeping, advantages,
 * loss) as a share of the iteration.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { grpoAdvantages, rlLoss } from '../../src/algorithms/index.ts';
import { makeBandit } from '../../src/envs/bandit/env.ts';
import { TinkerPolicy } from '../../src/policy/tinker/index.ts';
import { rollout } from '../../src/rollout/index.ts';
import { at } from '../../src/core/indexing.ts';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string', default: 'http://127.0.0.1:8765' },
    'base-model': { type: 'string' },
    out: { type: 'string', default: 'tinker-witness.json' },
    iterations: { type: 'string', default: '3' },
    'learning-rate': { type: 'string', default: '0.01' },
  },
});
const baseModel = values['base-model'];
if (baseModel === undefined) {
  process.stderr.write(
    'usage: check.ts --base-model <folder the server serves> [--base-url URL] [--out witness.json] [--iterations N]\n',
  );
  process.exit(2);
}
const iterations = Number(values.iterations);
const learningRate = Number(values['learning-rate']);
const target = '<answer>B</answer>';
const failures: string[] = [];
const check = (ok: boolean, message: string): void => {
  process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${message}\n`);
  if (!ok) failures.push(message);
};

const common = {
  baseUrl: values['base-url'],
  baseModel,
  rank: 8,
  lossReduction: 'sequence-mean' as const,
  contextWindow: 256,
  retry: { timeoutMs: 120_000 },
};
const policy = await TinkerPolicy.create(common);
process.stdout.write(
  `model ${policy.modelId} on ${policy.client.baseUrl} (LoRA rank 8, lossReduction sequence-mean)\n`,
);
const scratch = await mkdtemp(join(tmpdir(), 'agentrl-tinker-check-'));
try {
  const rows: string[] = [];
  for (let iteration = 0; iteration < iterations; iteration++) {
    const before = { ...policy.times };
    const started = performance.now();
    const { trajectories } = await rollout({
      policy,
      env: () => makeBandit(),
      seeds: [10 * iteration, 10 * iteration + 1],
      groupSize: 4,
      maxTurns: 1,
      maxNewTokens: 12,
      samplingSeed: iteration,
    });
    const sequences = trajectories.map((trajectory) => trajectory.tokens);
    const lossMask = trajectories.map((trajectory) => trajectory.lossMask);
    const oldLogprobs = trajectories.map((trajectory) => trajectory.logprobs);
    const tokenRewards = trajectories.map((trajectory) => {
      const reply = trajectory.turns[0]?.action ?? '';
      const matched = [...reply].filter((char) => target.includes(char)).length;
      const rewards = trajectory.tokenRewards.slice();
      const last = trajectory.lossMask.lastIndexOf(1);
      if (last >= 0) rewards[last] = at(rewards, last) + matched / Math.max(1, reply.length);
      return rewards;
    });
    const { advantages, scores, sequenceAdvantages } = grpoAdvantages({
      tokenRewards,
      lossMask,
      groupIds: trajectories.map((trajectory) => trajectory.groupId),
    });

    if (process.env.CHECK_DEBUG)
      process.stdout.write(
        `scores ${JSON.stringify(scores)} advantages ${JSON.stringify(sequenceAdvantages)} replies ${JSON.stringify(trajectories.map((t) => t.turns[0]?.action))}\n`,
      );
    const forward = await policy.logprobs({ sequences });
    let maxGap = 0;
    forward.forEach((row, s) => {
      row.forEach((logprob, t) => {
        if (at(lossMask, s)[t] === 1) maxGap = Math.max(maxGap, Math.abs(logprob - at(at(oldLogprobs, s), t)));
      });
    });
    check(
      maxGap < 1e-3,
      `iteration ${iteration}: sampled log-probs = forward log-probs (max |Δ| ${maxGap.toExponential(2)})`,
    );

    const loss = rlLoss({ oldLogprobs, advantages, lossMask, config: { lossAggMode: 'token-mean' } });
    const report = await policy.forwardBackward({ sequences }, loss);
    check(
      Number.isFinite(report.loss),
      `iteration ${iteration}: loss ${report.loss.toFixed(6)} is finite (${report.tokens} tokens, mean score ${(scores.reduce((a, b) => a + b, 0) / scores.length).toFixed(3)})`,
    );
    await policy.optimStep({ learningRate, maxGradNorm: 0 });
    const iterationMs = performance.now() - started;
    const spentSoFar = { ...policy.times };

    const after = await policy.logprobs({ sequences });
    let moved = 0;
    after.forEach((row, s) => {
      row.forEach((logprob, t) => {
        if (at(lossMask, s)[t] === 1) moved = Math.max(moved, Math.abs(logprob - at(at(forward, s), t)));
      });
    });
    check(
      moved > 1e-6,
      `iteration ${iteration}: log-probs moved after optim_step (max |Δ| ${moved.toExponential(2)}): the LoRA weights changed`,
    );

    const spent = (key: keyof typeof before): number => spentSoFar[key] - before[key];
    const sampling = spent('sample') + spent('samplerSync');
    const training = spent('forward') + spent('forwardBackward');
    const optim = spent('optimStep');
    const other = iterationMs - sampling - training - optim;
    rows.push(
      `${iteration}\t${iterationMs.toFixed(0)}\t${sampling.toFixed(0)}\t${training.toFixed(0)}\t${optim.toFixed(0)}\t${other.toFixed(1)} (${((100 * other) / iterationMs).toFixed(2)}%)`,
    );
  }
  process.stdout.write(
    `\ntime split per iteration (ms; 'other' = agentrl's own work between the server calls)\niteration\ttotal\tsampling\tforward+forward_backward\toptim_step\tother\n${rows.join('\n')}\n\n`,
  );

  // Witness data: the final weights' log-probs of two sequences, one seeded sample, and the checkpoint.
  const prompt = [257, 259, ...Buffer.from('Pick an arm.'), 258, 261];
  const [sample] = await policy.generateBatch([
    { prompt, maxNewTokens: 8, temperature: 1, seed: 1234, stopTokens: [258] },
  ]);
  const sequences = [
    [...prompt, ...sample!.tokens],
    [257, 260, ...Buffer.from('hello world'), 258],
  ];
  const logprobs = await policy.logprobs({ sequences });
  const checkpoint = join(scratch, 'checkpoint');
  await policy.save(checkpoint);
  const { tinkerPath } = JSON.parse(
    await (await import('node:fs/promises')).readFile(join(checkpoint, 'tinker-checkpoint.json'), 'utf8'),
  ) as { tinkerPath: string };

  const reloaded = await TinkerPolicy.create({ ...common, seed: 99 });
  try {
    await reloaded.load(checkpoint);
    const again = await reloaded.logprobs({ sequences });
    let gap = 0;
    again.forEach((row, s) => {
      row.forEach((logprob, t) => {
        gap = Math.max(gap, Math.abs(logprob - at(at(logprobs, s), t)));
      });
    });
    check(gap < 1e-5, `a new run that loads the checkpoint scores the same (max |Δ| ${gap.toExponential(2)})`);
  } finally {
    await reloaded.close();
  }

  const witness = {
    baseUrl: policy.client.baseUrl,
    baseModel,
    modelId: policy.modelId,
    tinkerPath,
    samplerPath: await policy.samplerWeights(),
    sample: {
      prompt,
      maxTokens: 8,
      temperature: 1,
      seed: 1234,
      stop: [258],
      tokens: sample!.tokens,
      logprobs: sample!.logprobs,
    },
    forward: { sequences, logprobs: logprobs.map((row) => Array.from(row.slice(1))) },
  };
  await writeFile(values.out, `${JSON.stringify(witness)}\n`);
  process.stdout.write(`witness written to ${values.out}\n`);
} finally {
  // The run stays loaded: the SDK witness samples from its sampler weights next.
  await policy.close({ unload: false });
  await rm(scratch, { recursive: true, force: true });
}
if (failures.length > 0) {
  process.stdout.write(`${failures.length} check(s) failed\n`);
  process.exit(1);
}
