/**
 * The reward-components contract over the whole registry (issue 31): every env declares its
 * named reward components (names, weights, honest kinds); on seeded expert, random and invalid
 * episodes every step carries `info.rewardComponents` with exactly the declared names, and its
 * reward is Σ weights[name] · components[name] to the bit. A throwing or non-finite reward
 * function rejects the step with `RewardComponentError`, never a silent 0.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Env } from '../core/index.ts';
import { entry } from '../core/indexing.ts';
import { reward, rewardKinds } from '../rewards/reward.ts';
import { rubric } from '../rewards/rubric.ts';
import { CountdownEnv } from './countdown/env.ts';
import { RewardComponentError } from './errors.ts';
import { assertStepRewardComponents } from './reward-components-check.ts';
import type { Expert } from './expert.ts';
import { environments } from './index.ts';
import { splitSeeds } from './split.ts';
import type { ToolTaskStep } from './tool-task.ts';

/** Non-zero weights wherever an env has an option for one, so every component is weighed. */
const weighedOptions: Record<string, object> = {
  calculator: { toolCallReward: 0.3 },
  math: { formatReward: 0.05 },
  search: { citationWeight: 0.5, searchCostWeight: 0.2, hallucinationWeight: 0.3 },
};

function makeWeighed(name: string, make: (options?: object) => Env, schemaKeys: readonly string[]): Env {
  const formatPenalty = schemaKeys.includes('formatPenalty') ? { formatPenalty: 0.1 } : {};
  return make({ ...formatPenalty, ...weighedOptions[name] });
}

/** Plays one episode, checking every step; `script` actions first, then the expert. */
async function playChecked(env: Env, seed: number, expert: Expert, script: string[] = []): Promise<number> {
  let observation = await env.reset({ seed });
  for (let turn = 0; turn < 40; turn++) {
    const result = await env.step({ text: script[turn] ?? expert.act(observation) });
    assertStepRewardComponents(env, result);
    observation = result.observation;
    if (result.done || result.truncated) return turn + 1;
  }
  return 40;
}

test('every env declares its reward components: names, finite weights, honest kinds', () => {
  for (const descriptor of environments) {
    const env = makeWeighed(descriptor.name, descriptor.make, Object.keys(descriptor.optionsSchema.shape));
    const spec = env.rewardComponents;
    assert.ok(spec !== undefined, `${descriptor.name} declares no rewardComponents`);
    assert.ok(spec.names.length > 0);
    for (const name of spec.names) {
      assert.ok(Number.isFinite(entry(spec.weights, name)), `${descriptor.name}.${name} weight`);
      assert.ok(rewardKinds.includes(entry(spec.kinds, name)), `${descriptor.name}.${name} kind`);
    }
    const kinds = spec.names.map((name) => entry(spec.kinds, name));
    assert.ok(kinds.includes('outcome'), `${descriptor.name}: some component pays for the outcome`);
    if (spec.names.includes('invalid_action')) {
      assert.equal(entry(spec.kinds, 'invalid_action'), 'penalty');
      assert.equal(entry(spec.weights, 'invalid_action'), -0.1, `${descriptor.name}: −formatPenalty`);
    }
  }
});

test('every env, expert, random and invalid episodes: each step reward is Σ weights · components', async () => {
  for (const descriptor of environments) {
    const env = makeWeighed(descriptor.name, descriptor.make, Object.keys(descriptor.optionsSchema.shape));
    try {
      for (const [i, seed] of splitSeeds('train', 2).entries()) {
        await playChecked(env, seed, descriptor.expert({ seed: i }));
        await playChecked(env, seed, descriptor.expert({ seed: i, randomActionRate: 1 }));
      }
      const invalid = ['no tags at all', '<answer></answer>', '<tool_call>{not json</tool_call>'];
      await playChecked(env, splitSeeds('train', 3)[2] ?? 0, descriptor.expert(), invalid);
    } finally {
      await env.close?.();
    }
  }
});

test('a throwing or non-finite reward function rejects the step with RewardComponentError, never 0', async () => {
  type Step = ToolTaskStep<unknown>;
  class BrokenCountdown extends CountdownEnv {
    override readonly rewardComponents = rubric<Step>([
      reward<Step>('solved', (step) => (step.turn.kind === 'answer' ? 1 : 0)),
      reward<Step>('judge', () => {
        throw new TypeError('judge endpoint down');
      }),
      reward<Step>('length', () => Number.NaN, { kind: 'shaping' }),
    ]) as never;
  }
  const env = new BrokenCountdown();
  await env.reset({ seed: 0 });
  await assert.rejects(env.step({ text: '<answer>1 + 2</answer>' }), (error: unknown) => {
    assert.ok(error instanceof RewardComponentError);
    assert.match(error.message, /countdown: .*judge \(TypeError: judge endpoint down\), length \(returned NaN/);
    assert.deepEqual(Object.keys(error.details.failures as object), ['judge', 'length']);
    return true;
  });
});
