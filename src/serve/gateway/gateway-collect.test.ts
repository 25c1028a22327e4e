/** gatewayCollect over real HTTP: agents (the `openai` SDK) run G times per seed through the gateway; failing runs are dropped and counted. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import OpenAI from 'openai';
import { at } from '../../core/indexing.ts';
import { GatewayError } from './errors.ts';
import { gatewayCollect, type DroppedRun } from './gateway-collect.ts';
import { startGateway } from './gateway.ts';
import { lastUser, sampler } from './scripted-sampler-fixture.ts';

/** The trainer's collect settings every gatewayCollect test uses. */
const config = { groupSize: 3, temperature: 0.7, maxNewTokens: 5 };

describe('gatewayCollect: runs and groups', () => {
  test('runs the agent G times per seed, samples at the trainer temperature and budget, groups by seed', async () => {
    const policy = sampler((context) => `r${lastUser(context)}`);
    const gateway = await startGateway({ sampler: policy });
    try {
      const collect = gatewayCollect({
        gateway,
        agent: async (run) => {
          const client = new OpenAI({ baseURL: run.baseURL, apiKey: run.apiKey, defaultHeaders: run.headers });
          const completion = await client.chat.completions.create({
            model: 'gpt-4o-mini',
            temperature: 0,
            max_tokens: 100,
            messages: [{ role: 'user', content: `${run.seed}` }],
          });
          return at(completion.choices, 0, 'choices').message.content!;
        },
        reward: ({ output, messages, seed }) => (output === `r${seed}` && messages.at(-1)!.content === output ? 1 : 0),
      });
      const trajectories = await collect({ seeds: [4, 9], iteration: 1, config });
      assert.equal(trajectories.length, 6);
      assert.deepEqual(
        trajectories.map((t) => t.seed),
        [4, 4, 4, 9, 9, 9],
      );
      assert.equal(new Set(trajectories.map((t) => t.groupId)).size, 2);
      assert.ok(trajectories.every((t) => t.totalReward === 1 && t.success && t.segments!.length === 1));
      assert.ok(
        policy.requests.every((request) => request.temperature === 0.7 && request.maxNewTokens === 5),
        'the trainer’s temperature and reply budget',
      );
      assert.ok(
        trajectories.every(
          (t) => t.lossMask.filter((m) => m === 1).length === 'r4'.length + 1 && t.logprobs.every((l) => l <= 0),
        ),
      );
    } finally {
      await gateway.close();
    }
  });
});

describe('gatewayCollect: failing runs', () => {
  test('a failing agent run is dropped, counted and said; all runs failing is a GatewayError', async () => {
    const gateway = await startGateway({ sampler: sampler(() => 'ok') });
    try {
      const warnings: DroppedRun[] = [];
      const collect = gatewayCollect({
        gateway,
        onWarning: (dropped) => warnings.push(dropped),
        agent: async (run) => {
          if (run.sample === 1) throw new TypeError('agent bug');
          const client = new OpenAI({ baseURL: run.baseURL, apiKey: run.apiKey });
          await client.chat.completions.create({ model: run.model, messages: [{ role: 'user', content: 'x' }] }); // session by model name
          return run.sample;
        },
        reward: ({ output }) => {
          if (output === 2) throw new RangeError('reward bug');
          return 1;
        },
      });
      const trajectories = await collect({ seeds: [1], iteration: 1, config });
      assert.equal(trajectories.length, 1);
      assert.deepEqual(warnings.map((w) => [w.reason, w.message]).sort(), [
        ['agent-error', 'agent bug'],
        ['reward-error', 'reward bug'],
      ]);
      assert.equal(gateway.metrics().sessionsDropped, 2);
      const broken = gatewayCollect({
        gateway,
        onWarning: () => {},
        agent: async () => 'never called the gateway',
        reward: () => 1,
      });
      await assert.rejects(
        broken({ seeds: [1], iteration: 2, config }),
        (error: unknown) => error instanceof GatewayError && /no-calls/.test(error.message),
      );
    } finally {
      await gateway.close();
    }
  });
});
