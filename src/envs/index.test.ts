import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError, UnknownNameError } from '../core/index.ts';
import {
  CalculatorCurriculum,
  calculatorOptionsSchema,
  defaultOperandStages,
  environmentNames,
  environments,
  getEnvironment,
  makeEnv,
  playEpisode,
  splitSeed,
} from './index.ts';

test('every described environment makes an env of its name whose expert succeeds', async () => {
  assert.deepEqual(environmentNames().slice(0, 4), ['frozen-lake', 'sokoban', 'calculator', 'bandit']);
  for (const name of [
    'math',
    'countdown',
    'code',
    'search',
    'swe',
    'webshop',
    'negotiation',
    'mcp-files',
    'absolute-zero',
    'browser-shop',
  ])
    assert.ok(environmentNames().includes(name), name);
  for (const descriptor of environments) {
    const env = descriptor.make();
    assert.equal(env.name, descriptor.name);
    for (const field of [descriptor.description, descriptor.actions, descriptor.reward])
      assert.ok(field.length > 0 && !field.includes('\n'));
    const episode = await playEpisode(env, descriptor.expert({ seed: 1 }), splitSeed('validation', 0));
    assert.equal(episode.success, true, descriptor.name);
    await (env as { close?: () => Promise<void> }).close?.();
  }
});

test('makeEnv passes options through the schema; unknown names list the known ones', () => {
  assert.equal(makeEnv('sokoban', { maxSteps: 20 }).name, 'sokoban');
  assert.throws(() => makeEnv('sokoban', { maxStep: 20 }), InvalidArgumentError);
  assert.throws(() => makeEnv('frozen-lake', { size: 1 }), /allowed options: size, holeProbability/);
  assert.throws(() => getEnvironment('chess'), UnknownNameError);
  assert.throws(
    () => getEnvironment('chess'),
    /unknown environment "chess"; allowed: frozen-lake, sokoban, calculator, bandit, math/,
  );
});

test("the calculator's reward line names each shaping option of its schema and the curriculum, which agentrl/envs exports", () => {
  const shaping = Object.keys(calculatorOptionsSchema.shape).filter((key) => key.endsWith('Reward'));
  assert.deepEqual(shaping.sort(), ['callFormatReward', 'callOperandsReward', 'toolCallReward']);
  const { reward } = getEnvironment('calculator');
  for (const option of shaping) assert.ok(reward.includes(option), option);
  assert.ok(reward.includes('CalculatorCurriculum'));
  const stage = new CalculatorCurriculum().stageOptions(); // the easiest stage, fed to the env's own schema
  assert.equal(makeEnv('calculator', { ...stage, callFormatReward: 0.1 }).name, 'calculator');
  assert.deepEqual(stage, defaultOperandStages[0]);
});
