import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { at } from '../../core/indexing.ts';
import { frozenLakeExpert, makeEnv, splitSeeds } from '../../envs/index.ts';
import { OpenEnvClient, type OpenEnvError, type OpenEnvSession } from './client.ts';
import { startEnvServer, type EnvServer, type EnvServerOptions } from './env-server.ts';
import { serializeReset, serializeStep } from './wire.ts';

/** Sends raw text on a fresh /ws connection and returns the first reply. */
async function rawExchange(
  server: EnvServer,
  ...texts: string[]
): Promise<{ type: string; data: Record<string, unknown> }[]> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws`);
  await new Promise((resolve) => ws.once('open', resolve));
  const replies: { type: string; data: Record<string, unknown> }[] = [];
  const done = new Promise<void>((resolve) =>
    ws.on('message', (raw) => {
      replies.push(JSON.parse(raw.toString()));
      if (replies.length === texts.length) resolve();
    }),
  );
  for (const text of texts) ws.send(text);
  await done;
  ws.close();
  return replies;
}

async function post(server: EnvServer, path: string, body: string): Promise<{ status: number; json: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, json: await response.json() };
}

/** A server and its client for the tests of one describe: started before them, closed after. */
function serveDuringSuite(options: EnvServerOptions): { server: EnvServer; client: OpenEnvClient } {
  const suite = {} as { server: EnvServer; client: OpenEnvClient };
  before(async () => {
    suite.server = await startEnvServer(options);
    suite.client = new OpenEnvClient(suite.server.url);
  });
  after(() => suite.server.close());
  return suite;
}

const frozenLake: EnvServerOptions = { env: () => makeEnv('frozen-lake'), port: 0, maxSessions: 4 };

describe('OpenEnv server (frozen-lake): HTTP', () => {
  const suite = serveDuringSuite(frozenLake);

  test('GET /health, /metadata, /schema, /state', async () => {
    assert.deepEqual(await suite.client.health(), { status: 'healthy' });
    const metadata = await suite.client.metadata();
    assert.equal(metadata.name, 'frozen-lake');
    assert.match(String(metadata.readme_content), /Instructions/);
    const schema = (await suite.client.schema()) as { action: any; observation: any; state: any };
    assert.deepEqual(schema.action.required, ['text']);
    assert.equal(schema.action.additionalProperties, false);
    assert.ok('truncated' in schema.observation.properties && 'step_count' in schema.state.properties);
    assert.deepEqual(await suite.client.state(), {
      episode_id: null,
      step_count: 0,
      seed: null,
      done: false,
      env: 'frozen-lake',
    });
  });

  test('POST /reset and /step answer what the local env gives for the same seed', async () => {
    const seed = at(splitSeeds('test', 1), 0, 'test seeds');
    const local = makeEnv('frozen-lake');
    assert.deepEqual(await suite.client.reset({ seed }), serializeReset(await local.reset({ seed })));
    const action = { text: '<answer>Right</answer>' };
    assert.deepEqual(
      await suite.client.step(action, { seed }),
      JSON.parse(JSON.stringify(serializeStep(await local.step(action)))),
    );
    const invalid = await suite.client.step({ text: 'no tags' });
    assert.equal(
      invalid.observation.metadata.invalidAction,
      true,
      'an unparseable reply is an env-level invalid action, not a 422',
    );
  });

  test('malformed JSON and invalid actions are HTTP 422 with FastAPI-style detail', async () => {
    const malformed = await post(suite.server, '/step', '{"action": ');
    assert.equal(malformed.status, 422);
    assert.equal(malformed.json.detail[0].type, 'json_invalid');
    for (const [body, location] of [
      ['{"action": {"text": 3}}', ['body', 'action', 'text']],
      ['{"action": {"text": "x", "move": 1}}', ['body', 'action']],
      ['{"action": {}}', ['body', 'action', 'text']],
      ['{"act": {"text": "x"}}', ['body', 'action']],
    ] as const) {
      const response = await post(suite.server, '/step', body);
      assert.equal(response.status, 422, body);
      assert.deepEqual(response.json.detail[0].loc, location, body);
    }
    assert.equal((await post(suite.server, '/reset', '{"seed": -1}')).status, 422);
    assert.equal((await fetch(`${suite.server.url}/nope`)).status, 404);
    assert.equal((await fetch(`${suite.server.url}/reset`)).status, 405);
  });
});

describe('OpenEnv server (frozen-lake): WebSocket', () => {
  const suite = serveDuringSuite(frozenLake);

  test('WebSocket: reset, step, state and close; the episode matches the local env', async () => {
    const seed = at(splitSeeds('test', 2), 1, 'test seeds');
    const session = await suite.client.session();
    const local = makeEnv('frozen-lake');
    const expert = frozenLakeExpert({ seed });
    let observation = await local.reset({ seed });
    assert.deepEqual(await session.reset({ seed, episode_id: 'ep-1' }), serializeReset(observation));
    let steps = 0;
    for (;;) {
      const action = { text: expert.act(observation) };
      const result = await local.step(action);
      assert.deepEqual(await session.step(action), JSON.parse(JSON.stringify(serializeStep(result))));
      steps++;
      observation = result.observation;
      if (result.done || result.truncated) break;
    }
    assert.deepEqual(await session.state(), {
      episode_id: 'ep-1',
      step_count: steps,
      seed,
      done: true,
      env: 'frozen-lake',
    });
    await assert.rejects(
      session.step({ text: '<answer>Up</answer>' }),
      (error: OpenEnvError) =>
        error.protocolCode === 'EXECUTION_ERROR' && /after the episode ended/.test(error.message),
    );
    await session.close();
    assert.equal(session.open, false);
  });

  test('WebSocket errors: INVALID_JSON, UNKNOWN_TYPE, VALIDATION_ERROR, EXECUTION_ERROR', async () => {
    const replies = await rawExchange(
      suite.server,
      '{"type": "reset", ',
      '{"type": "teleport"}',
      '{"data": {}}',
      '[1, 2]',
      '{"type": "step", "data": {"text": 7}}',
      '{"type": "step", "data": {"text": "x", "extra": true}}',
      '{"type": "state", "data": {}}',
      '{"type": "step", "data": {"text": "<answer>Up</answer>"}}',
      '{"type": "reset", "data": {"seed": 1}}',
    );
    assert.deepEqual(
      replies.map((reply) => (reply.type === 'error' ? reply.data.code : reply.type)),
      [
        'INVALID_JSON',
        'UNKNOWN_TYPE',
        'UNKNOWN_TYPE',
        'VALIDATION_ERROR',
        'VALIDATION_ERROR',
        'VALIDATION_ERROR',
        'VALIDATION_ERROR',
        'EXECUTION_ERROR',
        'observation',
      ],
    );
    assert.match(String(at(replies, 1, 'replies').data.message), /teleport/);
    assert.match(String(at(replies, 7, 'replies').data.message), /before reset/);
  });
});

describe('OpenEnv server (frozen-lake): sessions', () => {
  const suite = serveDuringSuite(frozenLake);

  test('capacity: the session over maxSessions gets CAPACITY_REACHED; a freed slot is reusable', async () => {
    const sessions: OpenEnvSession[] = [];
    for (let i = 0; i < 4; i++) sessions.push(await suite.client.session());
    await Promise.all(sessions.map((session, i) => session.reset({ seed: i })));
    const extra = await suite.client.session();
    await assert.rejects(
      extra.reset({ seed: 9 }),
      (error: OpenEnvError) => error.protocolCode === 'CAPACITY_REACHED' && error.details.max_sessions === 4,
    );
    await sessions.pop()!.close();
    const again = await suite.client.session();
    assert.equal((await again.reset({ seed: 9 })).done, false);
    await Promise.all([...sessions, again].map((session) => session.close()));
  });

  test('concurrent sessions are isolated: interleaved episodes each match their own local run', async () => {
    const seeds = splitSeeds('validation', 4);
    const sessions = await Promise.all(seeds.map(() => suite.client.session()));
    const episodes = sessions.map((session, i) => ({
      seed: at(seeds, i, 'seeds'),
      session,
      local: makeEnv('frozen-lake'),
      over: false,
    }));
    await Promise.all(
      episodes.map(async ({ seed, session, local }) =>
        assert.deepEqual(await session.reset({ seed }), serializeReset(await local.reset({ seed }))),
      ),
    );
    const moves = ['Right', 'Down', 'Left', 'Up'];
    for (let turn = 0; turn < 6; turn++) {
      await Promise.all(
        episodes.map(async (episode, i) => {
          if (episode.over) return;
          const action = { text: `<answer>${moves[(turn + i) % 4]}</answer>` };
          const expected = await episode.local.step(action);
          assert.deepEqual(await episode.session.step(action), JSON.parse(JSON.stringify(serializeStep(expected))));
          episode.over = expected.done || expected.truncated;
        }),
      );
    }
    const states = await Promise.all(sessions.map((session) => session.state()));
    assert.deepEqual(
      states.map((state) => state.seed),
      seeds,
    );
    await Promise.all(sessions.map((session) => session.close()));
  });

  test('a bounded load: 16 sessions × 25 steps, zero errors', async () => {
    const load = await startEnvServer({ env: () => makeEnv('frozen-lake'), port: 0, maxSessions: 16 });
    const loadClient = new OpenEnvClient(load.url);
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, async (_, i) => {
        const session = await loadClient.session();
        let steps = 0;
        for (let episode = 0; steps < 25; episode++) {
          await session.reset({ seed: i * 100 + episode });
          for (let done = false; !done && steps < 25; steps++)
            done = (await session.step({ text: '<answer>Left</answer>' })).done;
        }
        await session.close();
        return steps;
      }),
    );
    await load.close();
    assert.deepEqual(
      results.filter((result) => result.status === 'rejected'),
      [],
    );
    assert.deepEqual(
      results.map((result) => (result.status === 'fulfilled' ? result.value : 0)),
      Array(16).fill(25),
    );
  });
});

describe('OpenEnv server (calculator): MCP tools and idle timeout', () => {
  const suite = serveDuringSuite({ env: () => makeEnv('calculator'), port: 0, sessionTimeoutS: 0.3 });

  test('POST /mcp: tools/list, tools/call, tool errors, unknown tool and method, parse error', async () => {
    const list = (await suite.client.mcp('tools/list')) as any;
    assert.equal(list.result.tools[0].name, 'calculator');
    assert.deepEqual(list.result.tools[0].inputSchema.required, ['expression']);
    const call = (await suite.client.mcp(
      'tools/call',
      { name: 'calculator', arguments: { expression: '2 * (3 + 4)' } },
      7,
    )) as any;
    assert.deepEqual(call, {
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: '14' }], isError: false, structuredContent: { result: 14 }, data: 14 },
    });
    const bad = (await suite.client.mcp('tools/call', { name: 'calculator', arguments: { expr: '1' } })) as any;
    assert.equal(bad.result.isError, true);
    assert.match(
      bad.result.content[0].text,
      /^invalid arguments for calculator: expression: Invalid input: expected string, received undefined; input: Unrecognized key: "expr"$/,
    );
    const thrown = (await suite.client.mcp('tools/call', {
      name: 'calculator',
      arguments: { expression: '1 +' },
    })) as any;
    assert.deepEqual(thrown.result, {
      content: [{ type: 'text', text: 'error: unexpected end; allowed: integers, + - * ( )' }],
      isError: true,
    });
    const unknown = (await suite.client.mcp('tools/call', { name: 'search' })) as any;
    assert.deepEqual(unknown.error, { code: -32602, message: 'unknown tool "search"; allowed: calculator' });
    assert.equal(((await suite.client.mcp('resources/list')) as any).error.code, -32601);
    assert.equal((await post(suite.server, '/mcp', '{"jsonrpc": ')).json.error.code, -32700);
  });

  test('WebSocket mcp message and a tool call as a step action', async () => {
    const session = await suite.client.session();
    const reset = await session.reset({ seed: 5 });
    const expression = (reset.observation.data as { expression: string }).expression;
    const answer = (await session.mcp('tools/call', { name: 'calculator', arguments: { expression } })) as any;
    const step = await session.step({ text: '', tool_call: { name: 'calculator', arguments: { expression } } });
    assert.equal(step.observation.text, `<tool_response>${answer.result.content[0].text}</tool_response>`);
    const final = await session.step({ text: `<answer>${answer.result.content[0].text}</answer>` });
    assert.deepEqual([final.reward, final.done, final.observation.metadata.success], [1, true, true]);
    await session.close();
  });

  test('a silent session is closed after the idle timeout with SESSION_ERROR', async () => {
    const session = await suite.client.session();
    await session.reset({ seed: 1 });
    assert.equal(suite.server.activeSessions(), 1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    assert.equal(suite.server.activeSessions(), 0);
    await assert.rejects(
      session.state(),
      (error: OpenEnvError) => error.protocolCode === 'SESSION_ERROR' && /idle/.test(error.message),
    );
  });
});

test('an env factory that throws answers FACTORY_ERROR and closes the socket', async () => {
  let built = 0;
  const server = await startEnvServer({
    env: () => {
      if (built++ > 0) throw new Error('no browser available');
      return makeEnv('bandit');
    },
    port: 0,
  });
  try {
    const session = await new OpenEnvClient(server.url).session();
    await assert.rejects(
      session.reset({ seed: 1 }),
      (error: OpenEnvError) => error.protocolCode === 'FACTORY_ERROR' && /no browser available/.test(error.message),
    );
    assert.equal(server.activeSessions(), 0);
  } finally {
    await server.close();
  }
});
