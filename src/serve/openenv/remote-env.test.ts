import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EpisodeEndedError, EpisodeNotStartedError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import { makeEnv, splitSeeds } from '../../envs/index.ts';
import { ScriptedPolicy } from '../../policy/scripted-policy.ts';
import { rollout } from '../../rollout/rollout.ts';
import { startEnvServer } from './env-server.ts';
import { PoolFullError, RemoteEnvPool } from './remote-env.ts';

const replies = [
  '<answer>Right</answer>',
  'not an action',
  '<think>t</think><answer>Down</answer>',
  '<answer>Up</answer>',
];
const policy = (): ScriptedPolicy =>
  new ScriptedPolicy({
    reply: ({ messages }) => at(replies, Math.floor(messages.length / 2) % replies.length, 'replies'),
    logprob: -0.5,
  });

test('a rollout through a pool of two remote env servers equals the local rollout (same seeds)', async () => {
  const options = { formatPenalty: 0.1, maxSteps: 6 };
  const servers = await Promise.all(
    [0, 1].map(() => startEnvServer({ env: () => makeEnv('frozen-lake', options), port: 0, maxSessions: 3 })),
  );
  const pool = await RemoteEnvPool.connect(servers.map((server) => server.url));
  try {
    assert.equal(pool.name, 'frozen-lake');
    assert.equal(pool.makeEnv().instructions, makeEnv('frozen-lake').instructions);
    assert.equal(pool.capacity, 6);
    const settings = {
      seeds: splitSeeds('train', 6),
      groupSize: 2,
      maxTurns: 5,
      concurrency: pool.capacity,
      samplingSeed: 3,
    };
    const local = await rollout({ policy: policy(), env: () => makeEnv('frozen-lake', options), ...settings });
    let peak = 0;
    const remote = await rollout({
      policy: policy(),
      env: () => pool.makeEnv(),
      ...settings,
      onEpisode: () => (peak = Math.max(peak, ...servers.map((server) => server.activeSessions()))),
    });
    assert.deepEqual(remote.trajectories, local.trajectories);
    assert.ok(
      local.trajectories.some((t) => t.truncated) &&
        local.trajectories.some((t) => t.turns.some((turn) => turn.invalidAction)),
    );
    assert.equal(peak, 3, 'the pool spreads the 6 live episodes over both servers');
    assert.deepEqual(
      pool.activeSessions(),
      Object.fromEntries(servers.map((server) => [server.url, 0])),
      'the rollout closed every session',
    );
    await assert.rejects(
      rollout({ policy: policy(), env: () => pool.makeEnv(), ...settings, concurrency: 7 }),
      PoolFullError,
    );
  } finally {
    await pool.close();
    await Promise.all(servers.map((server) => server.close()));
  }
});

test('RemoteEnv keeps the Env contract: step before reset, after the end and after close rejects; reset reuses the session', async () => {
  const server = await startEnvServer({ env: () => makeEnv('bandit'), port: 0 });
  const pool = await RemoteEnvPool.connect([server.url]);
  try {
    const env = pool.makeEnv();
    await assert.rejects(env.step({ text: '<answer>A</answer>' }), EpisodeNotStartedError);
    const local = makeEnv('bandit');
    for (const seed of [1, 2]) {
      // The same episode, all but the privileged part (the pay probabilities), which the server withholds.
      const { privileged: _, ...visible } = await local.reset({ seed });
      assert.deepEqual(await env.reset({ seed }), visible);
      const localStep = await local.step({ text: '<answer>B</answer>' });
      const { privileged: __, ...visibleStep } = localStep.observation;
      assert.deepEqual(await env.step({ text: '<answer>B</answer>' }), { ...localStep, observation: visibleStep });
      await assert.rejects(env.step({ text: '<answer>B</answer>' }), EpisodeEndedError);
    }
    assert.equal(server.activeSessions(), 1);
    await env.close();
    await assert.rejects(
      env.step({ text: '<answer>B</answer>' }),
      EpisodeNotStartedError,
      'a closed env has no episode',
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(server.activeSessions(), 0);
  } finally {
    await pool.close();
    await server.close();
  }
});
