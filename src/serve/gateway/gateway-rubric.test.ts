/** gatewayCollect({ rubric }) over real HTTP: the agents' posted rewards are the `posted` component; a session that posted nothing fails it (never 0). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { groupReward, reward, rubric, withoutFailedGroups } from '../../rewards/index.ts';
import type { EpisodeContext } from '../../rewards/episode-context.ts';
import { gatewayCollect } from './gateway-collect.ts';
import { startGateway } from './gateway.ts';
import { type GatewayEpisode, postedReward } from './gateway-rubric.ts';
import { lastUser, sampler } from './scripted-sampler-fixture.ts';

type Context = EpisodeContext<GatewayEpisode<string>>;

const echoed = reward<Context>('echoed', (c) => (c.task?.output === `r${c.prompt}` ? 1 : 0));
/** Relative within the group: 1 for the group's highest posted reward, 0 for the others. */
const best = groupReward<Context>('best', async (group) => {
  const posted = group.map((c) => c.task?.posted?.reward ?? Number.NEGATIVE_INFINITY);
  return posted.map((r) => (r === Math.max(...posted) ? 1 : 0));
});

test('gatewayCollect({ rubric }): each seed’s sessions scored together, the posted reward a component; nothing posted is a failure, not 0', async () => {
  const gateway = await startGateway({ sampler: sampler((context) => `r${lastUser(context)}`) });
  try {
    const collect = gatewayCollect<string>({
      gateway,
      onWarning: () => {},
      rubric: rubric([postedReward, echoed, best], { posted: 1, echoed: 0.5, best: 0.25 }),
      agent: async (run) => {
        const client = new OpenAI({ baseURL: run.baseURL, apiKey: run.apiKey, defaultHeaders: run.headers });
        const completion = await client.chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: `${run.seed}` }],
        });
        const text = at(completion.choices, 0, 'choices').message.content ?? '';
        if (!(run.seed === 8 && run.sample === 2)) {
          const posted = await fetch(`${run.baseURL}/sessions/${encodeURIComponent(run.sessionId)}/reward`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ reward: run.sample / 2 }),
          });
          assert.equal(posted.status, 200);
        }
        return text;
      },
    });
    const trajectories = await collect({
      seeds: [3, 8],
      iteration: 1,
      config: { groupSize: 3, temperature: 1, maxNewTokens: 8 },
    });
    assert.equal(trajectories.length, 6);
    const bySeed = (seed: number) => trajectories.filter((t) => t.seed === seed);
    bySeed(3).forEach((t, sample) => {
      const best = sample === 2 ? 1 : 0;
      assert.deepEqual(t.rewardComponents, { posted: sample / 2, echoed: 1, best });
      assert.equal(t.totalReward, sample / 2 + 0.5 + 0.25 * best);
      assert.equal(
        t.tokenRewards.reduce((a, b) => a + b, 0),
        t.totalReward,
      );
      assert.equal(t.rewardFailures, undefined);
    });
    const unposted = bySeed(8).find((t) => t.rewardFailures !== undefined);
    assert.match(unposted?.rewardFailures?.posted ?? '', /nothing was posted to its \/reward/);
    assert.equal(unposted?.rewardComponents?.posted, undefined, 'no posted value is made up');
    assert.deepEqual(
      withoutFailedGroups(trajectories).map((t) => t.seed),
      [3, 3, 3],
      'the group with the failure is left out of the update',
    );
    assert.equal(gateway.metrics().sessionsFinished, 6);
  } finally {
    await gateway.close();
  }
});

test('gatewayCollect: reward and rubric together are refused', async () => {
  const gateway = await startGateway({ sampler: sampler(() => 'x') });
  try {
    assert.throws(
      () => gatewayCollect({ gateway, agent: async () => 0, reward: () => 1, rubric: rubric([postedReward]) }),
      InvalidArgumentError,
    );
  } finally {
    await gateway.close();
  }
});
