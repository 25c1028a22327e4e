import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { entry } from '../../core/indexing.ts';
import { makeEnv } from '../../envs/index.ts';
import { OpenEnvClient } from './client.ts';
import { startEnvServer, type EnvServer } from './env-server.ts';
import { healthSchema, metadataSchema, stepResponseSchema } from './wire.ts';

describe('GET /openapi.json and /docs (what `openenv validate` reads)', () => {
  let server: EnvServer;
  before(async () => {
    server = await startEnvServer({ env: () => makeEnv('frozen-lake'), port: 0 });
  });
  after(() => server.close());

  test('an OpenAPI 3.1 document with info.version and exactly the HTTP routes the server answers', async () => {
    const response = await fetch(`${server.url}/openapi.json`);
    assert.equal(response.status, 200);
    const document = (await response.json()) as {
      openapi: string;
      info: { version: unknown; title: string };
      paths: Record<string, Record<string, any>>;
      components: { schemas: Record<string, unknown> };
    };
    assert.match(document.openapi, /^3\.1\./);
    assert.equal(
      document.info.version,
      '1.0.0',
      'the OpenEnv HTTP API version: openenv validate reports the profile openenv-http/1.x',
    );
    assert.match(document.info.title, /frozen-lake/);
    // openenv validate's mode check: simulation mode has /reset, /step and /state.
    for (const path of ['/reset', '/step', '/state', '/health', '/metadata', '/schema', '/mcp'])
      assert.ok(path in document.paths, path);
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const method of Object.keys(operations)) {
        const answer = await fetch(`${server.url}${path}`, {
          method: method.toUpperCase(),
          headers: { 'content-type': 'application/json' },
          body: method === 'post' ? (path === '/step' ? '{"action":{"text":"x"}}' : '{}') : undefined,
        });
        assert.ok(answer.status < 400, `${method} ${path} is documented but answers ${answer.status}`);
        await answer.arrayBuffer();
      }
    }
    const notFound = (await (await fetch(`${server.url}/nope`)).json()) as { detail: string };
    const endpoints = /endpoints: ([^;]*); WebSocket: \/ws, \/mcp$/.exec(notFound.detail)?.[1];
    assert.ok(endpoints !== undefined, `the 404 names the endpoints: ${notFound.detail}`);
    const served = endpoints.split(', ');
    assert.deepEqual(served.sort(), Object.keys(document.paths).sort(), 'every served route is documented');
    const step = entry(document.paths, '/step', 'documented path').post;
    assert.equal(step.requestBody.content['application/json'].schema.$ref, '#/components/schemas/StepRequest');
    assert.equal(step.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/StepResponse');
    assert.ok('422' in step.responses);
    for (const reference of JSON.stringify(document).match(/#\/components\/schemas\/[A-Za-z]+/g) ?? []) {
      assert.ok(reference.split('/').at(-1)! in document.components.schemas, `${reference} is defined`);
    }
  });

  test('the answers match the documented schemas (the zod schemas the document is generated from)', async () => {
    const client = new OpenEnvClient(server.url);
    assert.ok(healthSchema.safeParse(await client.health()).success);
    assert.ok(metadataSchema.safeParse(await client.metadata()).success);
    assert.ok(stepResponseSchema.safeParse(await client.reset({ seed: 2 })).success);
    const step = stepResponseSchema.safeParse(await client.step({ text: '<answer>Left</answer>' }, { seed: 2 }));
    assert.ok(step.success, step.error?.message);
  });

  test('/docs is a self-contained HTML page listing every endpoint (nothing loaded from the network)', async () => {
    const response = await fetch(`${server.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const html = await response.text();
    assert.match(html, /^<!doctype html>/i);
    for (const path of ['/reset', '/step', '/state', '/health', '/metadata', '/schema', '/mcp', '/openapi.json', '/ws'])
      assert.ok(html.includes(path), path);
    assert.doesNotMatch(html, /<script|<link|src=|https?:\/\//i);
  });
});
