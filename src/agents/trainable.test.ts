/**
 * The RL trainer trains through the scaffolds unchanged: `runRl({ collect })` takes the token-level
 * trajectories of ReAct and tool-calling runs (one token stream each) and of MemGPT (one segment
 * per step) from a tiny built-in model, and updates the model with GRPO.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Trajectory } from '../core/types.ts';
import { calculatorTool } from '../envs/calculator/env.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { makeBanditEnv } from '../train/bandit-test-fixture.ts';
import { runRl } from '../train/rl.ts';
import { MemGPTAgent } from './memgpt.ts';
import { runReAct } from './react.ts';
import { runToolLoop } from './tool-calling.ts';
import { rewardFinalTurn } from './transcript.ts';
import { at } from '../core/indexing.ts';

const tiny = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 2,
  intermediateSize: 64,
  maxSeqLen: 1024,
};
const config = {
  algo: 'grpo' as const,
  iterations: 1,
  tasksPerIteration: 1,
  groupSize: 2,
  maxTurns: 1,
  maxNewTokens: 12,
  validationEpisodes: 1,
  learningRate: 1e-2,
};

/** A score that varies between samples: the share of letters in the generated text. */
function letterShare(trajectory: Trajectory): number {
  const text = trajectory.turns.map((turn) => turn.action).join('');
  return text.length === 0 ? 0 : (text.match(/[a-z]/gi) ?? []).length / text.length;
}

/** Every parameter, concatenated. */
async function paramsOf(model: TransformerModel): Promise<Float32Array> {
  const tensors = [...(await model.hostParams()).values()].map((tensor) => tensor.data);
  const all = new Float32Array(tensors.reduce((n, data) => n + data.length, 0));
  let offset = 0;
  for (const data of tensors) {
    all.set(data, offset);
    offset += data.length;
  }
  return all;
}

describe('runRl trains through the scaffolds', () => {
  test('ReAct and tool-calling trajectories (token streams)', async () => {
    const model = await TransformerModel.create(tiny, { seed: 5 });
    const reference = await TransformerModel.fromParams(model.config, await model.hostParams());
    const before = Float32Array.from(await paramsOf(model));
    const collected: Trajectory[] = [];
    const result = await runRl({
      policy: new BuiltinPolicy({ model }),
      reference: new BuiltinPolicy({ model: reference }),
      env: makeBanditEnv,
      config,
      collect: async ({ policy, seeds, iteration }) => {
        const trajectories: Trajectory[] = [];
        for (const seed of seeds) {
          for (let sample = 0; sample < 2; sample++) {
            const sampling = { maxNewTokens: 12, temperature: 1, seed: iteration * 100 + seed * 10 + sample };
            const react = await runReAct({
              policy,
              tools: [calculatorTool],
              question: 'What is 2 + 2?',
              maxSteps: 2,
              sampling,
            });
            trajectories.push({
              ...rewardFinalTurn(react.trajectory, letterShare(react.trajectory)),
              groupId: `react-${seed}`,
              seed,
            });
            const loop = await runToolLoop({
              policy,
              tools: [calculatorTool],
              prompt: 'What is 2 + 2?',
              maxSteps: 2,
              sampling,
            });
            trajectories.push({
              ...rewardFinalTurn(loop.trajectory, letterShare(loop.trajectory)),
              groupId: `tools-${seed}`,
              seed,
            });
          }
        }
        collected.push(...trajectories);
        return trajectories;
      },
    });
    assert.equal(collected.length, 4);
    assert.ok(
      collected.every(
        (t) =>
          t.lossMask.some((m) => m === 1) && t.tokens.length === t.lossMask.length && t.logprobs.every((l) => l <= 0),
      ),
    );
    const [metrics] = result.history;
    assert.equal(metrics!.episodes, 4);
    assert.ok(
      metrics!.trained > 0 && Number.isFinite(metrics!.loss),
      `trained ${metrics!.trained}, loss ${metrics!.loss}`,
    );
    const after = await paramsOf(model);
    assert.ok(
      after.some((value, i) => value !== before[i]),
      'the update moved the weights',
    );
  });
});

describe('runRl trains through the scaffolds: MemGPT', () => {
  test('MemGPT trajectories (one segment per step)', async () => {
    const model = await TransformerModel.create(tiny, { seed: 6 });
    const reference = await TransformerModel.fromParams(model.config, await model.hostParams());
    const before = Float32Array.from(await paramsOf(model));
    const result = await runRl({
      policy: new BuiltinPolicy({ model }),
      reference: new BuiltinPolicy({ model: reference }),
      env: makeBanditEnv,
      config,
      collect: async ({ policy, seeds }) => {
        const trajectories: Trajectory[] = [];
        for (const seed of seeds) {
          for (let sample = 0; sample < 2; sample++) {
            const agent = new MemGPTAgent({
              policy,
              contextBudget: 600,
              maxSteps: 2,
              instructions: 'Answer with send_message.',
              listFunctions: false,
              sampling: { maxNewTokens: 12, temperature: 1, seed: seed * 10 + sample },
            });
            await agent.send('Hello!');
            const trajectory = agent.trajectory({ groupId: `memgpt-${seed}`, seed });
            trajectories.push(rewardFinalTurn(trajectory, letterShare(trajectory)));
          }
        }
        assert.ok(trajectories.every((t) => t.segments !== undefined && t.segments.length >= 1));
        return trajectories;
      },
    });
    assert.ok(at(result.history, 0).trained > 0 && Number.isFinite(at(result.history, 0).loss));
    const after = await paramsOf(model);
    assert.ok(
      after.some((value, i) => value !== before[i]),
      'the update moved the weights',
    );
  });
});
