import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TransformerModel } from '../model/model.ts';
import { getEnvironment } from '../envs/index.ts';
import { warmStart, warmStartConfigSchema } from './warm-start.ts';
import { runRl } from './rl.ts';

const bandit = getEnvironment('bandit');
const env = () => bandit.make({});
const tinyModel = { vocabSize: 272, hiddenSize: 64, numLayers: 2, numHeads: 2, numKvHeads: 1, intermediateSize: 128, maxSeqLen: 64 };

for (const algo of ['grpo', 'ppo'] as const) {
  test(`learning smoke test (${algo} on the bandit): loss finite, every parameter moves, reward rises`, async () => {
    const model = await TransformerModel.create({ ...tinyModel, valueHead: algo === 'ppo' }, { seed: 1 });
    // An imperfect start: demonstrations pick a random arm 80% of the time (≈60% better arm).
    await warmStart({
      model,
      env,
      expert: (seed, randomActionRate) => bandit.expert({ seed, randomActionRate }),
      config: warmStartConfigSchema.parse({ demonstrations: 64, randomActionRate: 0.8, sftSteps: 80, sftBatchSize: 16, sftLearningRate: 1e-2 }),
      maxTurns: 1,
      maxNewTokens: 24,
      instructions: false,
    });
    const start = await model.hostParams();
    const reference = await TransformerModel.fromParams(model.config, start);
    const result = await runRl({
      model,
      reference,
      env,
      config: {
        algo,
        iterations: 10,
        tasksPerIteration: 8,
        groupSize: 8,
        maxTurns: 1,
        maxNewTokens: 24,
        learningRate: 2e-3,
        validateEvery: 0,
        validationEpisodes: 16,
        seed: 3,
      },
    });
    assert.equal(result.history.length, 10);
    for (const m of result.history) assert.ok(Number.isFinite(m.loss) && Number.isFinite(m.gradNorm), `iteration ${m.iteration}: loss ${m.loss}`);
    const after = await model.hostParams();
    for (const [name, tensor] of start) {
      const moved = tensor.data.some((x, i) => x !== after.get(name)!.data[i]);
      assert.ok(moved, `parameter ${name} did not move`);
    }
    const early = (result.history[0]!.success + result.history[1]!.success) / 2;
    const late = (result.history[8]!.success + result.history[9]!.success) / 2;
    assert.ok(late > early + 0.15, `better-arm rate ${early.toFixed(2)} → ${late.toFixed(2)} (iterations 1–2 vs 9–10)`);
  });
}
