/**
 * What OpenEnv's own Python clients (openenv-core: GenericEnvClient, MCPToolClient in its step mode
 * and its HTTP "production" mode) send and read, spoken here by hand against the real server:
 * the env's info in `observation.metadata`, `data` in tools/call results, MCP actions through
 * step, `openenv/session/create|close`, and the WebSocket `/mcp`. scripts/interop/openenv runs
 * the Python clients themselves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { z } from 'zod';
import type { Env } from '../../core/types.ts';
import { makeEnv } from '../../envs/index.ts';
import { OpenEnvClient } from './client.ts';
import { startEnvServer, type EnvServer, type EnvServerOptions } from './env-server.ts';

/** An env whose `count` tool counts calls on its instance (from the episode's seed): shows which instance answered. */
function counterEnv(): Env {
  let count = 0;
  let episodes = 0;
  return {
    name: 'counter',
    tools: [
      {
        name: 'count',
        description: 'counts its calls on this env instance',
        inputSchema: z.object({ by: z.number().int().default(1) }),
        execute: ({ by }: { by: number }) => (count += by),
      },
    ],
    reset: async ({ seed }) => {
      count = seed;
      episodes++;
      return { text: `episode ${episodes}, count ${count}` };
    },
    step: async (action) => {
      if (action.toolCall?.name !== 'count')
        return { observation: { text: 'answered' }, reward: 1, done: true, truncated: false, info: { success: true } };
      const by = Number(action.toolCall.arguments.by ?? 1);
      if (!Number.isInteger(by))
        return {
          observation: { text: 'invalid: by must be an integer' },
          reward: -0.1,
          done: false,
          truncated: false,
          info: { invalidAction: true, reason: 'by must be an integer' },
        };
      count += by;
      return {
        observation: { text: `<tool_response>${count}</tool_response>` },
        reward: 0,
        done: false,
        truncated: false,
        info: { invalidAction: false, tool: 'count' },
      };
    },
  };
}

async function post(server: EnvServer, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: await response.json() };
}

async function rpc(server: EnvServer, method: string, params: Record<string, unknown> = {}, id = 1): Promise<any> {
  const { status, json } = await post(server, '/mcp', { jsonrpc: '2.0', id, method, params });
  assert.equal(status, 200);
  return json;
}

/** A WebSocket that answers each sent text with the next reply (JSON), with a 10 s limit. */
async function socket(
  url: string,
): Promise<{ send(value: unknown): Promise<any>; close(): void; closed: Promise<number> }> {
  const ws = new WebSocket(url);
  // Listening before `open` resolves: a refusal can arrive in the same tick as the upgrade.
  const waiting: ((reply: unknown) => void)[] = [];
  const early: unknown[] = [];
  ws.on('message', (raw) => {
    const reply = JSON.parse(raw.toString());
    const next = waiting.shift();
    if (next) next(reply);
    else early.push(reply);
  });
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  ws.on('error', () => {});
  return {
    send: (value) =>
      new Promise((resolve, reject) => {
        if (early.length > 0) return resolve(early.shift());
        const timer = setTimeout(
          () => reject(new Error(`no reply within 10 s to ${JSON.stringify(value).slice(0, 80)}`)),
          10_000,
        );
        waiting.push((reply) => {
          clearTimeout(timer);
          resolve(reply);
        });
        ws.send(typeof value === 'string' ? value : JSON.stringify(value));
      }),
    close: () => ws.terminate(),
    closed,
  };
}

/** A server for the tests of one describe: started before them, closed after. */
function serveDuringSuite(options: EnvServerOptions): { server: EnvServer } {
  const suite = {} as { server: EnvServer };
  before(async () => {
    suite.server = await startEnvServer(options);
  });
  after(() => suite.server.close());
  return suite;
}

const calculator: EnvServerOptions = { env: () => makeEnv('calculator'), port: 0 };
const counters: EnvServerOptions = { env: counterEnv, port: 0, maxSessions: 2, sessionTimeoutS: 0.5 };

describe('what OpenEnv clients read (calculator): metadata and tools/call data', () => {
  const suite = serveDuringSuite(calculator);

  test("the env's info travels in observation.metadata (GenericEnvClient hands back only the observation); no top-level metadata", async () => {
    const { server } = suite;
    const http = await post(server, '/step', { action: { text: 'no tags' }, seed: 3 });
    assert.equal(http.status, 200);
    assert.deepEqual(Object.keys(http.json).sort(), ['done', 'observation', 'reward']);
    assert.equal(http.json.observation.metadata.invalidAction, true);
    const session = await new OpenEnvClient(server.url).session();
    try {
      const reset = await session.reset({ seed: 3 });
      assert.deepEqual(reset.observation.metadata, {});
      const expression = (reset.observation.data as { expression: string }).expression;
      // biome-ignore lint/security/noGlobalEval: the env's own arithmetic expression (digits and + - *); eval is the independent reference answer
      const answer = await session.step({ text: `<answer>${eval(expression)}</answer>` });
      assert.deepEqual(
        [answer.reward, answer.done, answer.observation.metadata.success, 'metadata' in answer],
        [1, true, true, false],
      );
    } finally {
      await session.close();
    }
  });

  test('tools/call results carry data, the value MCPToolClient returns', async () => {
    const { server } = suite;
    const call = await rpc(server, 'tools/call', { name: 'calculator', arguments: { expression: '6 * 7' } }, 3);
    assert.deepEqual(call, {
      jsonrpc: '2.0',
      id: 3,
      result: { content: [{ type: 'text', text: '42' }], isError: false, structuredContent: { result: 42 }, data: 42 },
    });
    const failed = await rpc(server, 'tools/call', { name: 'calculator', arguments: { expression: '1 +' } });
    assert.equal(failed.result.isError, true);
    assert.equal('data' in failed.result, false, 'a failed call has no data, so the client shows the whole result');
  });
});

describe('what OpenEnv clients read (calculator): MCP actions through step', () => {
  const suite = serveDuringSuite(calculator);

  test('MCP actions through step: {"type":"list_tools"} and {"type":"call_tool"} over /ws (MCPToolClient step mode)', async () => {
    const { server } = suite;
    const ws = await socket(`${server.url.replace('http', 'ws')}/ws`);
    try {
      const reset = await ws.send({ type: 'reset', data: { seed: 4 } });
      const expression = reset.data.observation.data.expression as string;
      const list = await ws.send({ type: 'step', data: { type: 'list_tools' } });
      assert.equal(list.type, 'observation');
      assert.deepEqual(
        list.data.observation.tools.map((tool: { name: string }) => tool.name),
        ['calculator'],
      );
      assert.deepEqual(list.data.observation.tools[0].input_schema.required, ['expression']);
      assert.equal((await ws.send({ type: 'state' })).data.step_count, 0, 'listing tools is not a turn');
      const call = await ws.send({
        type: 'step',
        data: { type: 'call_tool', tool_name: 'calculator', arguments: { expression } },
      });
      assert.equal(call.type, 'observation', JSON.stringify(call));
      const observation = call.data.observation;
      assert.equal(observation.tool_name, 'calculator');
      assert.equal(observation.error, null);
      assert.equal(
        observation.result.data,
        // biome-ignore lint/security/noGlobalEval: the env's own arithmetic expression (digits and + - *); eval is the independent reference answer
        `<tool_response>${eval(expression)}</tool_response>`,
        'the tool result as the env shows it to the model',
      );
      assert.equal(observation.text, observation.result.data);
      assert.deepEqual([call.data.reward, call.data.done, observation.metadata.invalidAction], [0, false, false]);
      assert.equal(
        (await ws.send({ type: 'state' })).data.step_count,
        1,
        'a tool call is the env turn it would be as a tool_call action',
      );
      const unknown = await ws.send({
        type: 'step',
        data: { type: 'call_tool', tool_name: 'teleport', arguments: {} },
      });
      assert.deepEqual(
        [unknown.data.observation.error.error_type, unknown.data.observation.result],
        ['tool_not_found', null],
      );
      const badArguments = await ws.send({
        type: 'step',
        data: { type: 'call_tool', tool_name: 'calculator', arguments: { expr: '1' } },
      });
      assert.equal(badArguments.data.observation.error.error_type, 'invalid_args');
      const malformed = await ws.send({ type: 'step', data: { type: 'call_tool', arguments: {} } });
      assert.equal(malformed.data.code, 'VALIDATION_ERROR');
    } finally {
      ws.close();
    }
  });

  test('MCP actions through the stateless HTTP /step (the first turn of the episode of seed)', async () => {
    const { server } = suite;
    const list = await post(server, '/step', { action: { type: 'list_tools' } });
    assert.equal(list.status, 200);
    assert.equal(list.json.observation.tools[0].name, 'calculator');
    const call = await post(server, '/step', {
      action: { type: 'call_tool', tool_name: 'calculator', arguments: { expression: '2 + 2' } },
      seed: 1,
    });
    assert.equal(call.status, 200);
    assert.equal(call.json.observation.result.data, '<tool_response>4</tool_response>');
    assert.equal((await post(server, '/step', { action: { type: 'call_tool' } })).status, 422);
  });
});

describe('MCP sessions (openenv/session/create|close) over HTTP', () => {
  const suite = serveDuringSuite(counters);

  test("tools/* with a session_id use that session's env; without one, a fresh env each call; close frees it", async () => {
    const { server } = suite;
    const created = await rpc(server, 'openenv/session/create');
    const sessionId = created.result.session_id as string;
    assert.equal(typeof sessionId, 'string');
    const count = async (params: Record<string, unknown>): Promise<unknown> =>
      (await rpc(server, 'tools/call', { name: 'count', arguments: {}, ...params })).result.data;
    assert.deepEqual(
      [await count({ session_id: sessionId }), await count({ session_id: sessionId })],
      [1, 2],
      'one env, episode of seed 0',
    );
    assert.deepEqual(
      [await count({}), await count({})],
      [1, 1],
      'stateless: a fresh env, episode of seed 0, each call',
    );
    const seeded = (await rpc(server, 'openenv/session/create', { seed: 10 })).result.session_id;
    assert.equal(await count({ session_id: seeded }), 11);
    assert.equal(server.activeSessions(), 2);
    const listed = await rpc(server, 'tools/list', { session_id: sessionId });
    assert.equal(listed.result.tools[0].name, 'count');
    const full = await rpc(server, 'openenv/session/create');
    assert.equal(full.error.code, -32000);
    assert.deepEqual(full.error.data, { active_sessions: 2, max_sessions: 2 });
    assert.deepEqual((await rpc(server, 'openenv/session/close', { session_id: sessionId })).result, {
      session_id: sessionId,
      closed: true,
    });
    assert.equal((await rpc(server, 'openenv/session/close', { session_id: seeded })).result.closed, true);
    assert.equal(server.activeSessions(), 0);
    assert.equal(
      (await rpc(server, 'tools/call', { name: 'count', session_id: sessionId })).error.code,
      -32602,
      'a closed session is unknown',
    );
    assert.equal((await rpc(server, 'openenv/session/close', {})).error.code, -32602);
  });

  test('an MCP session silent for the idle timeout is closed', async () => {
    const { server } = suite;
    const sessionId = (await rpc(server, 'openenv/session/create')).result.session_id;
    assert.equal(server.activeSessions(), 1);
    await new Promise((resolve) => setTimeout(resolve, 900));
    assert.equal(server.activeSessions(), 0);
    assert.match((await rpc(server, 'tools/list', { session_id: sessionId })).error.message, /Unknown session_id/);
  });
});

describe('MCP over WebSockets: /mcp and openenv/session/create on /ws', () => {
  const suite = serveDuringSuite(counters);

  test('WebSocket /mcp: JSON-RPC messages on one env per connection; errors answer, the socket stays', async () => {
    const { server } = suite;
    const first = await socket(`${server.url.replace('http', 'ws')}/mcp`);
    const second = await socket(`${server.url.replace('http', 'ws')}/mcp`);
    try {
      const call = (socket: typeof first, id: number) =>
        socket.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'count', arguments: { by: 2 } } });
      assert.deepEqual(
        [(await call(first, 1)).result.data, (await call(first, 2)).result.data, (await call(second, 3)).result.data],
        [2, 4, 2],
      );
      assert.equal(server.activeSessions(), 2);
      assert.equal((await first.send('{"jsonrpc": ')).error.code, -32700);
      assert.equal((await first.send({ jsonrpc: '2.0', id: 4, method: 'resources/list' })).error.code, -32601);
      assert.equal((await first.send({ jsonrpc: '2.0', id: 5, method: 'tools/list' })).result.tools[0].name, 'count');
      const third = await socket(`${server.url.replace('http', 'ws')}/mcp`);
      const refused = await third.send({ jsonrpc: '2.0', id: 6, method: 'ping' });
      assert.equal(refused.error.code, -32000);
      assert.equal(await third.closed, 1013);
    } finally {
      first.close();
      second.close();
    }
  });

  test("on /ws, openenv/session/create names the socket's own session, which MCP cannot close", async () => {
    const { server } = suite;
    const ws = await socket(`${server.url.replace('http', 'ws')}/ws`);
    try {
      const created = await ws.send({ type: 'mcp', data: { jsonrpc: '2.0', id: 1, method: 'openenv/session/create' } });
      const sessionId = created.data.result.session_id;
      assert.equal(typeof sessionId, 'string');
      const close = await ws.send({
        type: 'mcp',
        data: { jsonrpc: '2.0', id: 2, method: 'openenv/session/close', params: { session_id: sessionId } },
      });
      assert.equal(close.data.error.code, -32600);
    } finally {
      ws.close();
    }
  });
});
