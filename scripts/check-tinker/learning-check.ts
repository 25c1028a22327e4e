/**
 * The learning signal of `npm run check:tinker`: GRPO through `TinkerPolicy` on a task the tiny random
 * model can learn in a few updates — answer in ASCII: one new token, reward 1 when it is a byte
 * below 128 (about 128 / 272 of the vocabulary, so every group of 32 samples has varying rewards).
 * Only the `TrainablePolicy` contract is used (generateBatch, forwardBackward with agentrl's
 * PPO-clip `rlLoss`, optimStep, logprobs), so whatever loss encoding the client picks (server-side
 * importance_sampling / ppo, or per-token weights) is what is checked: a loss pushed the wrong way
 * (the issue's `'sum'` sign bug) makes the reward fall.
 *
 * The signal is the objective itself, measured exactly rather than sampled: the expected reward
 * J = Σ_{t<128} π(t | prompt), averaged over the prompts, from `logprobs` of the 128 one-token
 * replies. Passes when J after the last update exceeds J before the first by --margin (default
 * 0.01) and rose in most updates. Seeded: the same numbers on a rerun against the same server.
 * (Measured with the official SDK on skyrl 0.3.0, same task, importance_sampling, lr 0.01:
 * J 0.4655 → 0.4986 in 8 updates, rising at every one.)
 *
 *   node --import tsx scripts/check-tinker/learning-check.ts --base-url http://127.0.0.1:8766 --base-model /path/model
 */
import { parseArgs } from 'node:util';
import { grpoAdvantages, rlLoss } from '../../src/algorithms/index.ts';
import { TinkerPolicy } from '../../src/policy/tinker/index.ts';

const { values } = parseArgs({
  options: {
    'base-url': { type: 'string', default: 'http://127.0.0.1:8766' },
    'base-model': { type: 'string' },
    iterations: { type: 'string', default: '6' },
    'group-size': { type: 'string', default: '32' },
    'learning-rate': { type: 'string', default: '0.01' },
    margin: { type: 'string', default: '0.01' },
    'loss-reduction': { type: 'string', default: 'sequence-mean' },
  },
});
const baseModel = values['base-model'];
if (baseModel === undefined) {
  process.stderr.write('usage: learning-check.ts --base-model <folder the server serves> [--base-url URL]\n');
  process.exit(2);
}
const iterations = Number(values.iterations);
const groupSize = Number(values['group-size']);
const learningRate = Number(values['learning-rate']);
const margin = Number(values.margin);
// Two prompts (byte-tokenizer ids: <bos>, user, text, <eot>, assistant), one group each.
const prompts = ['Answer in ASCII.', 'Say something.'].map((text) => [257, 259, ...Buffer.from(text), 258, 261]);
const ascii = Array.from({ length: 128 }, (_, token) => token);
const rewardOf = (tokens: readonly number[]): number => ((tokens[0] ?? 256) < 128 ? 1 : 0);

const policy = await TinkerPolicy.create({
  baseUrl: values['base-url'],
  baseModel,
  rank: 8,
  seed: 5,
  lossReduction: values['loss-reduction'] as 'sum' | 'sequence-mean',
  contextWindow: 256,
});
/** J = Σ_{t<128} π(t | prompt), averaged over the prompts (one forward of 128 × prompts rows). */
const expectedReward = async (): Promise<number> => {
  const sequences = prompts.flatMap((prompt) => ascii.map((token) => [...prompt, token]));
  const rows = await policy.logprobs({ sequences });
  const mass = rows.reduce((sum, row) => sum + Math.exp(row.at(-1) ?? Number.NEGATIVE_INFINITY), 0);
  return mass / prompts.length;
};
const expected: number[] = [];
try {
  for (let iteration = 0; iteration < iterations; iteration++) {
    expected.push(await expectedReward());
    const requests = prompts.flatMap((prompt, p) =>
      Array.from({ length: groupSize }, (_, row) => ({
        prompt,
        maxNewTokens: 1,
        temperature: 1,
        seed: 1000 * iteration + 100 * p + row,
      })),
    );
    const generations = await policy.generateBatch(requests);
    const sequences = requests.map((request, row) => [...request.prompt, ...(generations[row]?.tokens ?? [])]);
    const lossMask = requests.map((request, row) => [
      ...request.prompt.map(() => 0),
      ...(generations[row]?.tokens ?? []).map(() => 1),
    ]);
    const oldLogprobs = requests.map((request, row) => [
      ...request.prompt.map(() => 0),
      ...(generations[row]?.logprobs ?? []),
    ]);
    const rewards = generations.map((generation) => rewardOf(generation.tokens));
    const tokenRewards = lossMask.map((mask, row) => {
      const values = mask.map(() => 0);
      values[mask.lastIndexOf(1)] = rewards[row] ?? 0;
      return values;
    });
    const { advantages } = grpoAdvantages({
      tokenRewards,
      lossMask,
      groupIds: requests.map((_, row) => Math.floor(row / groupSize)),
    });
    const loss = rlLoss({ oldLogprobs, advantages, lossMask, config: { lossAggMode: 'token-mean' } });
    const report = await policy.forwardBackward({ sequences }, loss);
    await policy.optimStep({ learningRate, maxGradNorm: 0 });
    const mean = rewards.reduce((sum, reward) => sum + reward, 0) / rewards.length;
    process.stdout.write(
      `iteration ${iteration}: expected reward J ${expected.at(-1)?.toFixed(4)} before the update; sampled mean ${mean.toFixed(3)} over ${rewards.length} replies; loss ${report.loss.toFixed(4)}\n`,
    );
  }
  expected.push(await expectedReward());
} finally {
  await policy.close();
}
const first = expected[0] ?? Number.NaN;
const last = expected.at(-1) ?? Number.NaN;
const rises = expected.slice(1).filter((value, index) => value > (expected[index] ?? Number.POSITIVE_INFINITY)).length;
const learned = last >= first + margin && rises > iterations / 2;
process.stdout.write(
  `${learned ? 'ok  ' : 'FAIL'} learning signal: expected reward J ${first.toFixed(4)} → ${last.toFixed(4)} over ${iterations} GRPO updates (needs +${margin}), rising in ${rises} of ${iterations}\n`,
);
if (!learned) process.exit(1);
