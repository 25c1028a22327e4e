/**
 * Every example in examples/ runs end to end on a tiny random built-in model with a tiny budget
 * (STYLE.md §10): the scaffolds run on a real model; the replies are noise, so only the shape of
 * the results is checked.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { example as mcts } from '../../examples/mcts.ts';
import { example as memgpt } from '../../examples/memgpt.ts';
import { tinyModel } from '../../examples/policy.ts';
import { example as react } from '../../examples/react.ts';
import { example as reflexion } from '../../examples/reflexion.ts';
import { example as toolCalling } from '../../examples/tool-calling.ts';
import { arithmeticCorpus, example as toolformer } from '../../examples/toolformer.ts';
import { example as treeOfThoughts } from '../../examples/tree-of-thoughts.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';

describe('examples/ on a tiny random built-in model', () => {
  let policy: BuiltinPolicy;
  before(async () => {
    policy = new BuiltinPolicy({ model: await TransformerModel.create(tinyModel, { seed: 0 }) });
  });

  test('react', async () => {
    const result = await react(policy, { maxSteps: 2, maxNewTokens: 12 });
    assert.ok(result.steps.length >= 1 && result.steps.length <= 2);
    assert.ok(['finish', 'max-steps'].includes(result.stopReason));
  });

  test('tool-calling', async () => {
    const result = await toolCalling(policy, { steps: 2, maxNewTokens: 12 });
    assert.ok(result.steps.length >= 1 && result.steps.length <= 2);
  });

  test('reflexion', async () => {
    const result = await reflexion(policy, { trials: 2, maxSteps: 1, maxNewTokens: 12 });
    assert.ok(result.trials.length >= 1 && result.trials.length <= 2);
  });

  test('tree-of-thoughts (bfs and dfs)', async () => {
    for (const search of ['bfs', 'dfs']) {
      const result = await treeOfThoughts(policy, { search, maxNewTokens: 8 });
      assert.ok(result.calls > 0 && result.states >= 0);
    }
  });

  test('mcts', async () => {
    const result = await mcts(policy, { iterations: 2, maxNewTokens: 8 });
    assert.ok(result.calls > 0 && result.path.length >= 1);
  });

  test('memgpt', async () => {
    const result = await memgpt(policy, { filler: 0, maxSteps: 1, maxNewTokens: 12, contextBudget: 800, short: true });
    assert.ok(result.segments >= 1 && result.segments <= 2, `${result.segments} segments`);
  });

  test('toolformer: corpus, annotation, SFT', async () => {
    assert.equal(arithmeticCorpus(3, 1).length, 3);
    assert.deepEqual(arithmeticCorpus(3, 1), arithmeticCorpus(3, 1), 'the corpus is seeded');
    const result = await toolformer(policy, { texts: 2, sftSteps: 2 });
    assert.equal(result.annotated.length, 2);
    assert.ok(Number.isFinite(result.finalLoss));
  });
});
