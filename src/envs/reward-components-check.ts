/**
 * Test support (issue 31): a step's reward agrees with the env's named components. The env must
 * declare `rewardComponents`; the step's `info.rewardComponents` must hold exactly the declared
 * names; and its reward must be Σ weights[name] · components[name], summed in the declared order,
 * to the bit. Used by `envContract` on every step it plays and by the registry-wide contract.
 */
import assert from 'node:assert/strict';
import type { Env, StepResult } from '../core/index.ts';
import { entry } from '../core/indexing.ts';

export function assertStepRewardComponents(env: Env, result: StepResult): void {
  const spec = env.rewardComponents;
  assert.ok(spec !== undefined, `${env.name} declares no rewardComponents`);
  const components = result.info.rewardComponents;
  assert.ok(components !== undefined, `${env.name}: a step without info.rewardComponents`);
  assert.deepEqual(Object.keys(components).sort(), [...spec.names].sort(), `${env.name}: component names`);
  let total = 0;
  for (const name of spec.names)
    total += entry(spec.weights, name, `${env.name} weights`) * entry(components, name, `${env.name} components`);
  assert.equal(result.reward, total, `${env.name}: reward ${result.reward} is not Σ w·r = ${total}`);
}
