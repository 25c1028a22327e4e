import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeBandit, splitSeeds } from '../envs/index.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import type { GenerateRequest, Policy } from '../policy/types.ts';
import { evaluate } from './evaluate.ts';

test('evaluate: success rate on held-out seeds, greedy by default', async () => {
  const seeds = splitSeeds('test', 10);
  const temperatures: number[] = [];
  const spy = (reply: string): Policy => {
    const inner = new ScriptedPolicy({ reply: [reply] });
    return {
      tokenizer: inner.tokenizer,
      contextWindow: inner.contextWindow,
      generate: (request) => inner.generate(request),
      generateBatch(requests: readonly GenerateRequest[]) {
        temperatures.push(...requests.map((r) => r.temperature ?? 1));
        return inner.generateBatch(requests);
      },
    };
  };
  const good = await evaluate({ policy: spy('<answer>B</answer>'), env: () => makeBandit(), seeds });
  assert.equal(good.successRate, 1);
  assert.equal(good.episodes, 10);
  assert.deepEqual(
    good.trajectories.map((t) => t.seed),
    seeds,
  );
  assert.deepEqual(
    temperatures,
    seeds.map(() => 0),
    'greedy = temperature 0',
  );
  const bad = await evaluate({
    policy: spy('<answer>A</answer>'),
    env: () => makeBandit(),
    seeds,
    greedy: false,
    temperature: 0.8,
  });
  assert.equal(bad.successRate, 0);
  assert.ok(temperatures.slice(10).every((t) => t === 0.8));
});
