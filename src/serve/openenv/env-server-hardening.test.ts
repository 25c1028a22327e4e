import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { z } from 'zod';
import type { Env } from '../../core/types.ts';
import { startEnvServer, type EnvServer } from './env-server.ts';

/** Keys that are ordinary JSON object keys but name properties of Object.prototype. */
const nastyArguments =
  '{"constructor":null,"__proto__":{"polluted":1},"toString":"t","hasOwnProperty":2,"valueOf":{"constructor":{"prototype":null}}}';

/**
 * Echoes a tool call's arguments back (observation data and info); a few actions make the env
 * misbehave: `throw-string` throws a non-Error, `bigint` returns a result JSON cannot encode.
 */
function echoEnv(): Env {
  return {
    name: 'echo',
    tools: [
      { name: 'echo', description: 'returns its arguments', inputSchema: z.unknown(), execute: (input) => input },
    ],
    reset: async ({ seed }) => ({ text: `seed ${seed}` }),
    step: async (action) => {
      if (action.text === 'throw-string') throw 'a thrown string';
      if (action.text === 'bigint')
        return { observation: { text: 'big', data: 10n }, reward: 0, done: false, truncated: false, info: {} };
      const echoed = action.toolCall?.arguments ?? null;
      return {
        observation: { text: action.text, data: { arguments: echoed } },
        reward: 0,
        done: false,
        truncated: false,
        info: { arguments: echoed },
      };
    },
  };
}

type Reply = { type: string; data: any };

/** One WebSocket connection that collects replies in order. */
async function connect(
  server: EnvServer,
): Promise<{ ws: WebSocket; send(message: string | Buffer): Promise<Reply>; closed: Promise<number> }> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws`);
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  const waiting: ((reply: Reply) => void)[] = [];
  ws.on('message', (raw) => waiting.shift()?.(JSON.parse(raw.toString())));
  ws.on('error', () => {});
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  const send = (message: string | Buffer): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no reply within 10 s to ${String(message).slice(0, 80)}`)),
        10_000,
      );
      waiting.push((reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      ws.send(message);
    });
  return { ws, send, closed };
}

async function post(
  server: EnvServer,
  path: string,
  body: string,
): Promise<{ status: number; json: any; text: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text), text };
}

function assertNotPolluted(): void {
  assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
}

/** A server of `echoEnv` for the tests of one describe: started before them, closed after. */
function echoServerDuringSuite(): { server: EnvServer } {
  const suite = {} as { server: EnvServer };
  before(async () => {
    suite.server = await startEnvServer({ env: echoEnv, port: 0 });
  });
  after(() => suite.server.close());
  return suite;
}

describe('OpenEnv server: hostile keys', () => {
  const suite = echoServerDuringSuite();

  test('constructor, __proto__, toString, hasOwnProperty are ordinary record keys and round-trip unchanged (WebSocket)', async () => {
    const { server } = suite;
    const session = await connect(server);
    try {
      assert.equal(
        (await session.send('{"type":"reset","data":{"seed":1,"constructor":null,"__proto__":{"polluted":1}}}')).type,
        'observation',
      );
      const step = await session.send(
        `{"type":"step","data":{"text":"echo","tool_call":{"name":"echo","arguments":${nastyArguments}},"metadata":${nastyArguments}}}`,
      );
      assert.equal(step.type, 'observation', JSON.stringify(step));
      assert.equal(JSON.stringify(step.data.observation.data.arguments), nastyArguments);
      assert.equal(JSON.stringify(step.data.observation.metadata.arguments), nastyArguments);
      const mcp = await session.send(
        `{"type":"mcp","data":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":${nastyArguments},"constructor":null}}}`,
      );
      assert.equal(mcp.type, 'mcp');
      assert.equal(mcp.data.result.isError, false);
      assert.equal(JSON.stringify(mcp.data.result.structuredContent.result), nastyArguments);
      assertNotPolluted();
    } finally {
      session.ws.terminate();
    }
  });

  test('the same keys over HTTP /reset, /step and /mcp', async () => {
    const { server } = suite;
    assert.equal(
      (await post(server, '/reset', '{"seed":2,"constructor":null,"toString":1,"__proto__":{"polluted":1}}')).status,
      200,
    );
    const step = await post(
      server,
      '/step',
      `{"action":{"text":"echo","tool_call":{"name":"echo","arguments":${nastyArguments}},"metadata":${nastyArguments}},"constructor":null}`,
    );
    assert.equal(step.status, 200, step.text);
    assert.equal(JSON.stringify(step.json.observation.data.arguments), nastyArguments);
    const mcp = await post(
      server,
      '/mcp',
      `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":${nastyArguments},"constructor":null}}`,
    );
    assert.equal(mcp.status, 200, mcp.text);
    assert.equal(JSON.stringify(mcp.json.result.structuredContent.result), nastyArguments);
    assertNotPolluted();
  });
});

describe('OpenEnv server: failing WebSocket messages', () => {
  const suite = echoServerDuringSuite();

  test('every failing WebSocket message answers an error to its own session; another session keeps working', async () => {
    const { server } = suite;
    const witness = await connect(server);
    const hostile = await connect(server);
    try {
      assert.equal((await witness.send('{"type":"reset","data":{"seed":5}}')).type, 'observation');
      assert.equal((await hostile.send('{"type":"reset","data":{"seed":6}}')).type, 'observation');
      const deep = '['.repeat(200_000) + ']'.repeat(200_000);
      const cases: [string | Buffer, string][] = [
        ['{"type":"constructor"}', 'UNKNOWN_TYPE'],
        ['{"type":"__proto__"}', 'UNKNOWN_TYPE'],
        ['{"type":"toString"}', 'UNKNOWN_TYPE'],
        ['{"type":"hasOwnProperty","data":{}}', 'UNKNOWN_TYPE'],
        ['{"type":{"toString":null,"valueOf":null}}', 'UNKNOWN_TYPE'],
        ['{"type":"step","data":{"text":"x","metadata":{"constructor":1}}}', 'observation'],
        ['{"type":"step","data":{"text":"x","metadata":[]}}', 'VALIDATION_ERROR'],
        ['{"type":"step","data":{"text":"throw-string"}}', 'EXECUTION_ERROR'],
        ['{"type":"step","data":{"text":"bigint"}}', 'EXECUTION_ERROR'],
        [`{"type":"step","data":{"text":"x","metadata":{"deep":${deep}}}}`, 'observation'],
        [`{"type":${deep}}`, 'UNKNOWN_TYPE'],
        [Buffer.from([0xff, 0x00, 0xfe, 0x7b, 0x22]), 'INVALID_JSON'],
        ['{"type":"mcp","data":{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"constructor":null}}}', 'mcp'],
      ];
      const answers: string[] = [];
      for (const [message] of cases) {
        const reply = await hostile.send(message);
        answers.push(reply.type === 'error' ? reply.data.code : reply.type);
        if (reply.type === 'error') assert.equal(typeof reply.data.message, 'string');
      }
      assert.deepEqual(
        answers,
        cases.map(([, code]) => code),
      );
      const stepped = await witness.send('{"type":"step","data":{"text":"still here"}}');
      assert.equal(stepped.data.observation.text, 'still here');
      assert.equal(
        (await hostile.send('{"type":"step","data":{"text":"and here"}}')).data.observation.text,
        'and here',
      );
      assertNotPolluted();
    } finally {
      witness.ws.terminate();
      hostile.ws.terminate();
    }
  });

  test('a frame over the size limit closes only its own socket (1009)', async () => {
    const { server } = suite;
    const witness = await connect(server);
    const big = await connect(server);
    try {
      assert.equal((await witness.send('{"type":"reset","data":{"seed":7}}')).type, 'observation');
      big.ws.send(`{"type":"step","data":{"text":"${'x'.repeat(9 * 1024 * 1024)}"}}`);
      assert.equal(await big.closed, 1009);
      assert.equal((await witness.send('{"type":"state"}')).data.seed, 7);
    } finally {
      witness.ws.terminate();
      big.ws.terminate();
    }
  });
});

describe('OpenEnv server: HTTP handlers that throw', () => {
  const suite = echoServerDuringSuite();

  test('HTTP handlers that throw answer JSON errors and the server keeps serving', async () => {
    const { server } = suite;
    const thrown = await post(server, '/step', '{"action":{"text":"throw-string"}}');
    assert.equal(thrown.status, 500);
    assert.match(thrown.json.detail, /a thrown string/);
    const unencodable = await post(server, '/step', '{"action":{"text":"bigint"}}');
    assert.equal(unencodable.status, 500);
    assert.equal(typeof unencodable.json.detail, 'string');
    const deep = await post(
      server,
      '/step',
      `{"action":{"text":"x","metadata":{"deep":${'['.repeat(200_000)}${']'.repeat(200_000)}}}}`,
    );
    assert.equal(deep.status, 200, deep.text.slice(0, 200));
    assert.equal(
      (await post(server, '/mcp', '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"constructor":null}}')).json
        .result.tools[0].name,
      'echo',
    );
    assert.equal((await post(server, '/step', '{"action":{"text":"x","metadata":{"constructor":null}}}')).status, 200);
    assert.deepEqual(await (await fetch(`${server.url}/health`)).json(), { status: 'healthy' });
  });
});

test('HTTP /state, /reset, /step with an env factory that throws answer 500 JSON', async () => {
  let built = 0;
  const server = await startEnvServer({
    env: () => {
      if (built++ > 0) throw new TypeError('factory broke');
      return echoEnv();
    },
    port: 0,
  });
  try {
    const state = await fetch(`${server.url}/state`);
    assert.equal(state.status, 500);
    assert.match(((await state.json()) as { detail: string }).detail, /factory broke/);
    assert.equal((await post(server, '/reset', '{}')).status, 500);
    assert.equal((await post(server, '/step', '{"action":{"text":"x"}}')).status, 500);
    assert.deepEqual(await (await fetch(`${server.url}/health`)).json(), { status: 'healthy' });
  } finally {
    await server.close();
  }
});
