/**
 * Request bodies are JSON only as application/json (http.ts `requireJsonContentType`), over real
 * HTTP: the media types a page elsewhere can post without the browser asking first (text/plain, the
 * form encodings) and bodies without a Content-Type are refused 415 in the server's error shape,
 * before any work; application/json with parameters and `+json` types are read.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeEnv } from '../envs/index.ts';
import { sampler } from './gateway/scripted-sampler-fixture.ts';
import { type Gateway, startGateway } from './gateway/gateway.ts';
import { type EnvServer, startEnvServer } from './openenv/env-server.ts';
import { rawRequest } from './raw-request-fixture.ts';

const refusedTypes = [
  'text/plain',
  'text/plain;charset=UTF-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
];

describe('serve-env reads JSON bodies only as application/json', () => {
  let server: EnvServer;
  let resets = 0;
  before(async () => {
    server = await startEnvServer({
      env: () => {
        const env = makeEnv('frozen-lake');
        const reset = env.reset.bind(env);
        env.reset = (options) => {
          resets++;
          return reset(options);
        };
        return env;
      },
      port: 0,
    });
  });
  after(() => server.close());

  test('text/plain, form encodings and a body without Content-Type → 415 {detail, code}; no env is reset', async () => {
    const before = resets;
    for (const [path, body] of [
      ['/reset', '{"seed": 3}'],
      ['/step', '{"action": {"text": "x"}}'],
      ['/mcp', '{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'],
    ] as const) {
      for (const type of refusedTypes) {
        const answer = await rawRequest(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': type },
          body,
        });
        assert.equal(answer.status, 415, `${path} ${type}: ${answer.text}`);
        assert.equal(answer.json.code, 'UNSUPPORTED_MEDIA_TYPE');
        assert.match(answer.json.detail, /Content-Type: application\/json/);
      }
      const untyped = await rawRequest(`${server.url}${path}`, { method: 'POST', body });
      assert.equal(untyped.status, 415, `${path} without Content-Type`);
    }
    assert.equal(resets, before, 'a refused request reset no env');
  });

  test('application/json (any case, with charset), +json types, and an empty untyped POST /reset are answered', async () => {
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/vnd.openenv+json']) {
      const answer = await rawRequest(`${server.url}/reset`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: '{"seed": 3}',
      });
      assert.equal(answer.status, 200, `${type}: ${answer.text}`);
    }
    assert.equal((await rawRequest(`${server.url}/reset`, { method: 'POST' })).status, 200);
  });
});

describe('the gateway (and serve-policy, same reader) reads JSON bodies only as application/json', () => {
  let gateway: Gateway;
  const scripted = sampler(() => 'ok');
  before(async () => {
    gateway = await startGateway({ sampler: scripted });
  });
  after(() => gateway.close());

  test('a text/plain chat completion → 415 OpenAI-shaped; nothing is sampled or recorded', async () => {
    gateway.openSession('typed');
    const answer = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-session-id': 'typed' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(answer.status, 415, answer.text);
    assert.deepEqual(Object.keys(answer.json.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(answer.json.error.code, 'unsupported_media_type');
    assert.equal(scripted.requests.length, 0);
    assert.equal(gateway.finishSession('typed')?.calls.length, 0);
  });
});
