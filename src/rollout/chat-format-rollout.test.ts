import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import type { Env } from '../core/types.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { rollout } from './rollout.ts';

/** Two turns: the observation, then "again", then done. */
const twoTurnEnv = (): Env => {
  let turn = 0;
  return {
    name: 'two-turn',
    instructions: 'Answer briefly.',
    async reset() {
      turn = 0;
      return { text: 'first question' };
    },
    async step() {
      turn++;
      return turn < 2
        ? { observation: { text: 'again' }, reward: 0, done: false, truncated: false, info: {} }
        : { observation: { text: 'done' }, reward: 1, done: true, truncated: false, info: { success: true } };
    },
  };
};

test("a policy carrying a ChatFormat is rendered for with the model's template: the trajectory is its rendering, replies masked with their stop token", async () => {
  const format = tinyChatmlFormat();
  const policy = new ScriptedPolicy({ reply: ['one', 'two'], tokenizer: format.tokenizer, chatFormat: format });
  const { trajectories } = await rollout({ policy, env: twoTurnEnv, seeds: [0], maxNewTokens: 16 });
  const trajectory = trajectories[0]!;
  const messages = [
    { role: 'system' as const, content: 'Answer briefly.' },
    { role: 'user' as const, content: 'first question' },
    { role: 'assistant' as const, content: 'one' },
    { role: 'user' as const, content: 'again' },
    { role: 'assistant' as const, content: 'two' },
  ];
  const expected = format.render(messages);
  // The rendering ends "two<|im_end|>\n"; the trajectory ends with the last reply's stop token and its "\n".
  assert.equal(format.tokenizer.decode(trajectory.tokens), format.tokenizer.decode(expected.tokens));
  assert.deepEqual(trajectory.tokens, expected.tokens);
  assert.deepEqual(trajectory.lossMask, expected.assistantMask);
  assert.equal(trajectory.totalReward, 1);
  assert.deepEqual(trajectory.turns.map((turn) => turn.action), ['one', 'two']);
});
