import assert from 'node:assert/strict';
import { test } from 'node:test';
import { roleEnvironment } from './role-environments.ts';
import { loraRoleModels, ScriptedBuiltinPolicy } from './role-test-fixture.ts';
import { runMultiAgentRl } from './run-multi-agent-rl.ts';

const proposal = '<answer>{"program": "function f(x) { return x * 3 + 1; }", "input": 4}</answer>';

test('absolute-zero: proposer and solver as separate adapters; the proposer is paid by the SOLVER policy’s solve rate', async () => {
  const [proposerModel, solverModel] = await loraRoleModels([1, 2]);
  if (proposerModel === undefined || solverModel === undefined) throw new TypeError('two models');
  const proposer = new ScriptedBuiltinPolicy(proposerModel, [proposal]);
  // By batch position: right, wrong — its 4 learnability attempts solve 2 (r̄ ½ → r_propose ½), its own solve turns 1 of 2.
  const solver = new ScriptedBuiltinPolicy(solverModel, ['<answer>13</answer>', '<answer>0</answer>']);
  const { env, roles } = roleEnvironment('absolute-zero', { envOptions: { solverSamples: 4 }, solver });
  const result = await runMultiAgentRl({
    env,
    roles,
    players: { proposer: { policy: proposer }, solver: { policy: solver } },
    config: {
      algo: 'grpo',
      klCoef: 0,
      iterations: 1,
      tasksPerIteration: 1,
      groupSize: 2,
      maxTurns: 2,
      maxNewTokens: 80,
      minibatchSize: 2,
      validateEvery: 0,
      validationEpisodes: 1,
      systemPrompt: false,
      historyTurns: 'all',
      seed: 2,
    },
  });
  assert.deepEqual(result.trainers, ['proposer', 'solver']);
  const scalars = result.history[0]?.scalars ?? {};
  assert.equal(scalars['role/proposer/reward'], 0.5, 'learnability 1 − ½');
  assert.equal(scalars['role/solver/reward'], 0.5, 'one of two solve turns right');
  assert.equal((await proposerModel.optimizerState()).step, 1);
  assert.equal((await solverModel.optimizerState()).step, 1);
});
