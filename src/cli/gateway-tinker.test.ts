/**
 * The gateway with a `TinkerPolicy` sampler, against the SDK-shaped loopback Tinker server
 * (src/policy/tinker/sdk-shaped-server.ts; the real-peer run is check:tinker's gateway step):
 *
 *   - `agentrl gateway --backend tinker`: replies sampled by the server's sampling client, recorded
 *     with the server's token ids and log-probs; a sampled id past the tokenizer (a spare vocabulary
 *     row) reads as U+FFFD and stays in the ids (no 400); SIGTERM closes the run and the LoRA run.
 *   - the same TinkerPolicy trains on the gateway's sessions (`runRl` + `gatewayCollect`): one
 *     GRPO iteration = the sessions' samples, a forward_backward and an optim_step on the server.
 *
 * Before: `agentrl gateway` took only a local model (`--backend` was an unknown flag).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { at } from '../core/indexing.ts';
import type { Trajectory } from '../core/types.ts';
import { startFakeServer } from '../policy/tinker/sdk-shaped-server.ts';
import { TinkerPolicy } from '../policy/tinker/index.ts';
import { gatewayCollect, startGateway } from '../serve/gateway/index.ts';
import { RunStore } from '../store/run-store.ts';
import { makeBanditEnv } from '../train/bandit-test-fixture.ts';
import { runRl } from '../train/rl.ts';

const bin = join(import.meta.dirname, '..', '..', 'bin', 'agentrl.js');
const spare = byteTokenizer.vocabSize + 3;

/** The gateway's URL, once the CLI prints it (its stderr goes to `onOutput`). */
function gatewayUrl(
  child: ReturnType<typeof spawn>,
  exited: Promise<number | null>,
  onOutput: (text: string) => string,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no URL within 60 s: ${output}`)), 60_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      output = onOutput(chunk.toString());
      const match = /on (http:\/\/[0-9.:]+)\/v1/.exec(output);
      if (match !== null) {
        clearTimeout(timer);
        resolve(at(match, 1));
      }
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${output}`)));
  });
}

test('agentrl gateway --backend tinker: the server samples, the run records its ids and log-probs, a spare id reads as U+FFFD', async () => {
  const sampled = [...byteTokenizer.encode('ok'), spare, ...byteTokenizer.encode('!')];
  const server = await startFakeServer({ sampledTokens: sampled });
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-gateway-tinker-'));
  const storePath = join(dir, 'runs.db');
  const flags = ['--backend', 'tinker', '--base-url', server.baseUrl, '--base-model', 'm', '--tokenizer', 'bytes'];
  const child = spawn(
    process.execPath,
    [bin, 'gateway', ...flags, '--port', '0', '--store', storePath, '--run-name', 'gw', '--record-every-s', '0.2'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TINKER_API_KEY: 'tml-test' } },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  try {
    const url = await gatewayUrl(child, exited, (text) => (output += text));
    assert.match(output, /gateway: m \(m, context 256/);
    const client = new OpenAI({
      baseURL: `${url}/v1`,
      apiKey: 'unused',
      defaultHeaders: { 'x-session-id': 'alice' },
      maxRetries: 0,
    });
    const completion = await client.chat.completions.create({
      model: 'any',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 8,
      logprobs: true,
    });
    const choice = at(completion.choices, 0);
    assert.equal(choice.message.content, 'ok\uFFFD!');
    assert.deepEqual(
      choice.logprobs?.content?.map((token) => token.logprob),
      sampled.map(() => -1),
    );
    const reward = await fetch(`${url}/v1/sessions/alice/reward`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reward: 1 }),
    });
    assert.equal(reward.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 600)); // a few recording ticks
  } finally {
    child.kill('SIGTERM');
  }
  try {
    assert.equal(await exited, 0, output);
    assert.deepEqual(server.refusals, []);
    assert.ok((server.applied.asample ?? 0) >= 1, JSON.stringify(server.applied));
    assert.ok(
      server.log.some((entry) => entry.path === '/api/v1/unload_model'),
      'the LoRA run is unloaded on SIGTERM',
    );
    const store = RunStore.open(storePath, { readonly: true });
    try {
      const [trajectory] = [...store.iterateTrajectories(store.run('gw').id)];
      assert.ok(trajectory !== undefined, output);
      const generated = trajectory.tokens.filter((_, i) => trajectory.lossMask[i] === 1);
      assert.deepEqual(generated, sampled, 'the ids as the server sampled them, the spare one included');
      assert.deepEqual(
        trajectory.logprobs.filter((_, i) => trajectory.lossMask[i] === 1),
        sampled.map(() => -1),
      );
    } finally {
      store.close();
    }
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test("a TinkerPolicy samples behind the gateway and trains on the gateway's sessions (runRl + gatewayCollect)", async () => {
  const server = await startFakeServer();
  const policy = await TinkerPolicy.create({
    baseUrl: server.baseUrl,
    baseModel: 'm',
    tokenizer: byteTokenizer,
    contextWindow: 256,
    heartbeatMs: 0,
    environment: {},
  });
  const gateway = await startGateway({ sampler: policy });
  const collected: Trajectory[] = [];
  try {
    const result = await runRl({
      policy,
      env: makeBanditEnv,
      config: {
        algo: 'grpo',
        klCoef: 0,
        iterations: 1,
        tasksPerIteration: 1,
        groupSize: 4,
        maxTurns: 1,
        maxNewTokens: 6,
        validationEpisodes: 1,
        learningRate: 1e-3,
        seed: 3,
      },
      collect: gatewayCollect({
        gateway,
        agent: async (run) => {
          const client = new OpenAI({ baseURL: run.baseURL, apiKey: run.apiKey, defaultHeaders: run.headers });
          const completion = await client.chat.completions.create({
            model: 'any',
            messages: [{ role: 'user', content: 'Say something.' }],
            max_tokens: 6,
          });
          return at(completion.choices, 0, 'choices').message.content ?? '';
        },
        reward: ({ sample }) => sample % 2, // a spread, so the group has an advantage
        onCollected: ({ trajectories }) => collected.push(...trajectories),
      }),
    });
    assert.equal(result.history.length, 1);
    assert.equal(collected.length, 4);
    for (const trajectory of collected) {
      const generated = trajectory.tokens.filter((_, i) => trajectory.lossMask[i] === 1);
      assert.equal(generated.length, 6);
      assert.ok(
        generated.every((id) => id >= 65 && id < 91),
        `the server's letters: ${generated.join(',')}`,
      );
    }
    assert.deepEqual(server.refusals, []);
    assert.ok((server.applied.forward_backward ?? 0) >= 1, JSON.stringify(server.applied));
    assert.ok((server.applied.optim_step ?? 0) >= 1, JSON.stringify(server.applied));
  } finally {
    await gateway.close();
    await policy.close();
    await server.close();
  }
});
