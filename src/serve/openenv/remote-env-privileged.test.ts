import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { getEnvironment, makeEnv, playEpisode, splitSeeds, withPrivileged } from '../../envs/index.ts';
import { PrivilegedCopyMismatchError } from '../../envs/errors.ts';
import { startEnvServer, type EnvServer } from './env-server.ts';
import { RemoteEnvPool } from './remote-env.ts';

/** Waits (up to 5 s) for the server to see every session closed. */
async function untilNoSessions(server: EnvServer): Promise<void> {
  for (const deadline = Date.now() + 5000; server.activeSessions() > 0; ) {
    assert.ok(Date.now() < deadline, `${server.activeSessions()} sessions still open 5 s after close`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('a scripted expert plays served envs through withPrivileged: the local copy follows each episode', async () => {
  // absolute-zero's privileged part (the executor's output) only exists after the proposal step.
  for (const name of ['bandit', 'code', 'negotiation', 'absolute-zero']) {
    const descriptor = getEnvironment(name);
    const server = await startEnvServer({ env: () => descriptor.make(), port: 0, maxSessions: 2 });
    const pool = await RemoteEnvPool.connect([server.url]);
    try {
      const bare = pool.makeEnv();
      const first = await bare.reset({ seed: 1 });
      assert.equal(first.privileged, undefined, `${name}: the server withholds the privileged part`);
      if (name !== 'absolute-zero') assert.throws(() => descriptor.expert().act(first), /withPrivileged/, name);
      await bare.close();
      for (const seed of splitSeeds('test', 2)) {
        const env = withPrivileged(pool.makeEnv(), descriptor.make());
        try {
          const episode = await playEpisode(env, descriptor.expert({ seed }), seed, 60);
          assert.equal(episode.success, true, `${name} seed ${seed}: the expert solved it over the wire`);
          // the spec comes from the copy; the step's components travel over the wire (issue 31)
          assert.deepEqual(env.rewardComponents?.names, descriptor.make().rewardComponents?.names, name);
          assert.deepEqual(Object.keys(episode.last.info.rewardComponents ?? {}), env.rewardComponents?.names, name);
        } finally {
          await env.close?.();
        }
      }
      await untilNoSessions(server);
    } finally {
      await pool.close();
      await server.close();
    }
  }
});

test('withPrivileged refuses a copy of another env, and a copy with other options at its first reset', async () => {
  const server = await startEnvServer({
    env: () => makeEnv('bandit', { arms: ['left', 'right'], payProbabilities: [0.9, 0.1] }),
    port: 0,
  });
  const pool = await RemoteEnvPool.connect([server.url]);
  try {
    assert.throws(() => withPrivileged(pool.makeEnv(), makeEnv('frozen-lake')), InvalidArgumentError);
    const env = withPrivileged(pool.makeEnv(), makeEnv('bandit'));
    await assert.rejects(env.reset({ seed: 3 }), PrivilegedCopyMismatchError);
    await env.close?.();
    const same = withPrivileged(
      pool.makeEnv(),
      makeEnv('bandit', { arms: ['left', 'right'], payProbabilities: [0.9, 0.1] }),
    );
    const observation = await same.reset({ seed: 3 });
    assert.deepEqual(observation.privileged, { payProbabilities: [0.9, 0.1] });
    assert.equal(getEnvironment('bandit').expert().act(observation), '<answer>left</answer>');
    await same.close?.();
  } finally {
    await pool.close();
    await server.close();
  }
});
