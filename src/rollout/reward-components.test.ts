import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Env, StepResult } from '../core/types.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { rollout } from './rollout.ts';

/** Three turns; each step pays `correct` (1 on the last turn if the reply is the answer) and `format` (0.1 per tagged reply). */
function makeQuiz(options: { nanAt?: number } = {}): Env<{ answer: string }> {
  let turn = 0;
  let answer = '';
  return {
    name: 'quiz',
    rewardComponents: {
      names: ['correct', 'format'],
      weights: { correct: 1, format: 1 },
      kinds: { correct: 'outcome', format: 'format' },
    },
    async reset({ seed, task }) {
      turn = 0;
      answer = task?.answer ?? String(seed % 7);
      return { text: `question ${seed}`, privileged: { answer } };
    },
    async step({ text }): Promise<StepResult> {
      turn++;
      const done = turn === 3;
      const format = text.startsWith('<a>') ? 0.1 : 0;
      const correct = done && text === `<a>${answer}` ? 1 : 0;
      const components = { correct: options.nanAt === turn ? Number.NaN : correct, format };
      return {
        observation: { text: `turn ${turn}` },
        reward: correct + format,
        done,
        truncated: false,
        info: { success: correct === 1, rewardComponents: components },
      };
    },
  };
}

const policy = (reply: string) => new ScriptedPolicy({ reply: () => reply, logprob: -0.5 });

test('rollout: each step’s rewardComponents are summed into the trajectory, the first observation and privileged come back per episode', async () => {
  const { trajectories, episodes } = await rollout({
    policy: policy('<a>3'),
    env: () => makeQuiz(),
    seeds: [3, 10],
    groupSize: 2,
    maxTurns: 5,
  });
  assert.equal(episodes.length, 4);
  for (const [i, trajectory] of trajectories.entries()) {
    const seed = trajectory.seed;
    const answer = String(seed % 7);
    const solved = answer === '3';
    assert.deepEqual(trajectory.rewardComponents, { correct: solved ? 1 : 0, format: 0.30000000000000004 });
    assert.equal(trajectory.rewardFailures, undefined);
    // Same value the env's own reward sums to.
    const fromComponents = (trajectory.rewardComponents?.correct ?? 0) + (trajectory.rewardComponents?.format ?? 0);
    assert.ok(Math.abs(trajectory.totalReward - fromComponents) < 1e-12);
    assert.deepEqual(episodes[i], { prompt: `question ${seed}`, privileged: { answer } });
  }
});

test('rollout: a task is kept per episode; a non-finite component is a named failure (not summed as 0)', async () => {
  const { trajectories, episodes } = await rollout({
    policy: policy('<a>x'),
    env: () => makeQuiz({ nanAt: 2 }),
    seeds: [1],
    tasks: [{ answer: 'x' }],
    maxTurns: 5,
  });
  const [trajectory] = trajectories;
  assert.deepEqual(episodes[0], { prompt: 'question 1', task: { answer: 'x' }, privileged: { answer: 'x' } });
  assert.equal(trajectory?.rewardComponents?.correct, 1, 'turns 1 and 3 summed');
  assert.match(trajectory?.rewardFailures?.correct ?? '', /NaN at turn 1, not a finite number/);
});

test('rollout: an env without components gives trajectories without the field; privileged that is not an object is kept under value', async () => {
  const scalarSecret: Env = {
    name: 'secret',
    reset: async () => ({ text: 'go', privileged: 42 }),
    step: async () => ({ observation: { text: '' }, reward: 0, done: true, truncated: false, info: {} }),
  };
  const { trajectories, episodes } = await rollout({ policy: policy('a'), env: () => scalarSecret, seeds: [0] });
  assert.equal('rewardComponents' in (trajectories[0] ?? {}), false);
  assert.deepEqual(episodes[0], { prompt: 'go', privileged: { value: 42 } });
});

test('rollout: a component name that is not a reward name (a remote env’s __proto__, a slash) is a failure, not summed', async () => {
  const hostile: Env = {
    name: 'hostile',
    reset: async () => ({ text: 'go' }),
    step: async () => ({
      observation: { text: '' },
      reward: 1,
      done: true,
      truncated: false,
      info: { rewardComponents: JSON.parse('{"__proto__": 5, "a/b": 1, "ok": 1}') },
    }),
  };
  const { trajectories } = await rollout({ policy: policy('a'), env: () => hostile, seeds: [0] });
  const [trajectory] = trajectories;
  assert.deepEqual(trajectory?.rewardComponents, { ok: 1 });
  assert.equal(Object.getPrototypeOf(trajectory?.rewardComponents), Object.prototype);
  assert.match(trajectory?.rewardFailures?.rewardComponents ?? '', /named "__proto__" at turn 0: not a reward name/);
});
