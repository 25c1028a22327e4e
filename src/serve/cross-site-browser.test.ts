/**
 * The attack of issue 27 point 5, from a real browser (headless Chromium, as the dashboard tests):
 * a page on another origin that the user visits tries to drive a local serve-env and gateway — a
 * `no-cors` text/plain POST /reset (no preflight), a JSON POST (preflighted), a WebSocket reset, a
 * chat completion and a posted reward. None of it reaches an env or the sampler. A page of the
 * server's own origin (serve-env's /docs) still can call it.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import type { Env } from '../core/types.ts';
import { launchChromium } from '../envs/browser-shop/browser.ts';
import { makeEnv } from '../envs/index.ts';
import { sampler } from './gateway/scripted-sampler-fixture.ts';
import { startGateway } from './gateway/gateway.ts';
import { startEnvServer } from './openenv/env-server.ts';

/** A frozen-lake env that counts its resets in `counter`. */
function countedEnv(counter: { resets: number }): Env {
  const env = makeEnv('frozen-lake');
  const reset = env.reset.bind(env);
  env.reset = (options) => {
    counter.resets++;
    return reset(options);
  };
  return env;
}

/**
 * What a page does to a server at `base`: each attempt's outcome ('sent' for an opaque no-cors
 * answer, a status, 'refused', 'open'). Plain JavaScript text: the test's transpiler must not touch
 * what runs in the page.
 */
function attack(page: Page, base: string): Promise<Record<string, unknown>> {
  return page.evaluate(`(async (base) => {
    const outcome = (request) => request.then((r) => (r.type === 'opaque' ? 'sent' : r.status), () => 'refused');
    const post = (path, body, mode, type) =>
      outcome(fetch(base + path, { method: 'POST', mode, headers: { 'content-type': type }, body }));
    const socket = () => new Promise((resolve) => {
      const ws = new WebSocket(base.replace('http', 'ws') + '/ws');
      ws.onopen = () => { ws.send(JSON.stringify({ type: 'reset', data: { seed: 2 } })); setTimeout(() => resolve('open'), 200); };
      ws.onerror = () => resolve('refused');
    });
    return {
      textPlainReset: await post('/reset', '{"seed": 1}', 'no-cors', 'text/plain'),
      jsonReset: await post('/reset', '{"seed": 1}', 'cors', 'application/json'),
      socket: await socket(),
      chat: await post('/v1/chat/completions', '{"model":"m","messages":[{"role":"user","content":"x"}]}', 'no-cors', 'text/plain'),
      reward: await post('/v1/sessions/victim/reward', '{"reward": 1e308}', 'no-cors', 'text/plain'),
    };
  })(${JSON.stringify(base)})`);
}

function listenPage(): Promise<Server> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<!doctype html><title>a page elsewhere</title>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test('a page on another origin cannot reset an env, open its socket, sample or score through the gateway', async () => {
  const counter = { resets: 0 };
  const env = await startEnvServer({ env: () => countedEnv(counter), port: 0 });
  const scripted = sampler(() => 'ok');
  const gateway = await startGateway({ sampler: scripted });
  gateway.openSession('victim');
  const page = await listenPage();
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    await tab.goto(`http://localhost:${(page.address() as AddressInfo).port}/`);
    const onEnv = await attack(tab, env.url);
    assert.deepEqual([onEnv.jsonReset, onEnv.socket], ['refused', 'refused'], JSON.stringify(onEnv));
    await attack(tab, gateway.url);
    await new Promise((resolve) => setTimeout(resolve, 200)); // a request that got through would have landed
    assert.equal(counter.resets, 0, 'no env was reset by the page');
    assert.equal(scripted.requests.length, 0, 'nothing was sampled for the page');
    assert.equal(gateway.finishSession('victim')?.reward, undefined, 'the session was not scored');

    await tab.goto(`${env.url}/docs`); // the server's own page
    const own = await tab.evaluate(
      "fetch('/reset', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).then((r) => r.status)",
    );
    assert.equal(own, 200);
    assert.equal(counter.resets, 1);
  } finally {
    await browser.close();
    page.close();
    await gateway.close();
    await env.close();
  }
});
