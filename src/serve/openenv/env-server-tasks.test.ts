import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import type { Env } from '../../core/types.ts';
import type { CodeTask } from '../../envs/code/code-task.ts';
import { makeCode } from '../../envs/code/env.ts';
import { startEnvServer, type EnvServer } from './env-server.ts';

/** A code task whose 50 tests each get 10 s of CPU: a looping answer would keep a sandbox busy for a minute. */
const slowTask: CodeTask = {
  id: 'slow',
  signature: 'f(x)',
  spec: 'returns x.',
  tests: Array.from({ length: 50 }, (_, index) => [[index], index] as [unknown[], unknown]),
  solution: 'function f(x) { return x; }',
};
const loopingAnswer = '<answer>function f(x) { while (true) {} }</answer>';
const hugeTask = { ...slowTask, tests: Array.from({ length: 20_000 }, () => [[1], 1]) };

/** Pids of this process's sandbox runs, found in /proc: descendants whose command line is a sandbox's. */
function sandboxPids(): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {} // the process ended meanwhile
  }
  const descends = (pid: number): boolean => {
    for (let at = parents.get(pid); at !== undefined && at > 1; at = parents.get(at))
      if (at === process.pid) return true;
    return false;
  };
  return [...parents.keys()].filter((pid) => {
    if (!descends(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('SANDBOX-RESULT');
    } catch {
      return false;
    }
  });
}

async function until(check: () => boolean, withinMs: number): Promise<number> {
  const started = performance.now();
  while (!check()) {
    if (performance.now() - started > withinMs) break;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return performance.now() - started;
}

/** An env without a task schema that shows the task it was given. */
function echoTaskEnv(): Env {
  return {
    name: 'echo-task',
    reset: async ({ task }) => ({ text: `task ${JSON.stringify(task ?? null)}` }),
    step: async () => ({ observation: { text: '' }, reward: 0, done: true, truncated: false, info: {} }),
  };
}

type Reply = { type: string; data: { code?: string; message?: string; observation?: { text: string } } };

async function openSocket(server: EnvServer): Promise<{ ws: WebSocket; next(message: unknown): Promise<Reply> }> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ws`);
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  const replies: ((reply: Reply) => void)[] = [];
  ws.on('message', (raw) => replies.shift()?.(JSON.parse(raw.toString())));
  return {
    ws,
    next: (message) =>
      new Promise((resolve) => {
        replies.push(resolve);
        ws.send(JSON.stringify(message));
      }),
  };
}

const postReset = (server: EnvServer, body: unknown) =>
  fetch(`${server.url}/reset`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('serve-env: a client that goes away stops its sandbox work', () => {
  let code: EnvServer;
  before(async () => {
    code = await startEnvServer({ env: () => makeCode({ callTimeoutMs: 10_000, maxWallMs: 60_000 }), port: 0 });
  });
  after(() => code.close());

  test('a WebSocket that closes mid-step has its sandbox process killed within a second', async () => {
    const { ws, next } = await openSocket(code);
    const reset = await next({ type: 'reset', data: { seed: 0, task: slowTask } });
    assert.equal(reset.type, 'observation', JSON.stringify(reset));
    ws.send(JSON.stringify({ type: 'step', data: { text: loopingAnswer } }));
    await until(() => sandboxPids().length > 0, 15_000);
    const running = sandboxPids();
    assert.ok(running.length > 0, 'the step started a sandbox process');
    ws.close();
    const took = await until(() => sandboxPids().length === 0, 1000);
    assert.deepEqual(
      sandboxPids(),
      [],
      `sandbox processes ${running.join(', ')} still there after ${took.toFixed(0)} ms`,
    );
  });

  test('an HTTP client that goes away mid-/step has its sandbox process killed within a second', async () => {
    const call = request(`${code.url}/step`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    call.on('error', () => {});
    call.end(
      JSON.stringify({ seed: 0, action: { text: '<answer>function fizzBuzz(n) { while (true) {} }</answer>' } }),
    );
    await until(() => sandboxPids().length > 0, 15_000);
    assert.ok(sandboxPids().length > 0, 'the step started a sandbox process');
    call.destroy();
    const took = await until(() => sandboxPids().length === 0, 1000);
    assert.deepEqual(sandboxPids(), [], `still there after ${took.toFixed(0)} ms`);
  });
});

describe("serve-env: a client's task is checked against the env's task schema", () => {
  let code: EnvServer;
  let strict: EnvServer;
  let open: EnvServer;
  before(async () => {
    code = await startEnvServer({ env: () => makeCode(), port: 0 });
    strict = await startEnvServer({ env: echoTaskEnv, port: 0 });
    open = await startEnvServer({ env: echoTaskEnv, port: 0, allowClientTasks: true });
  });
  after(async () => {
    await Promise.all([code.close(), strict.close(), open.close()]);
  });

  test('a 20,000-test task is refused over HTTP (422) and the WebSocket (VALIDATION_ERROR); a valid one is taken', async () => {
    const refused = await postReset(code, { seed: 0, task: hugeTask });
    assert.equal(refused.status, 422);
    const body = (await refused.json()) as { detail: { loc: string[]; msg: string }[]; code: string };
    assert.equal(body.code, 'CLIENT_TASK_REFUSED');
    assert.deepEqual(body.detail[0]?.loc, ['body', 'task']);
    assert.match(body.detail[0]?.msg ?? '', /invalid task for code: .*tests/s);
    const { ws, next } = await openSocket(code);
    const wsRefused = await next({ type: 'reset', data: { seed: 0, task: hugeTask } });
    assert.deepEqual([wsRefused.type, wsRefused.data.code], ['error', 'VALIDATION_ERROR']);
    const taken = await next({
      type: 'reset',
      data: { seed: 0, task: { ...slowTask, tests: slowTask.tests.slice(0, 3) } },
    });
    assert.match(taken.data.observation?.text ?? '', /Write a JavaScript function f\(x\)/);
    ws.close();
    assert.equal(
      (await postReset(code, { seed: 0, task: { ...slowTask, signature: 'f(x); process.exit()' } })).status,
      422,
    );
  });

  test('an env without a task schema takes no client task unless the server allows it; a seed alone always works', async () => {
    const refused = await postReset(strict, { seed: 1, task: { anything: true } });
    assert.equal(refused.status, 422);
    assert.match(JSON.stringify(await refused.json()), /declares no task schema.*--allow-client-tasks/);
    assert.equal((await postReset(strict, { seed: 1 })).status, 200);
    const allowed = await postReset(open, { seed: 1, task: { anything: true } });
    assert.equal(allowed.status, 200);
    assert.equal(
      ((await allowed.json()) as { observation: { text: string } }).observation.text,
      'task {"anything":true}',
    );
    const mcp = await fetch(`${strict.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'openenv/session/create', params: { task: { x: 1 } } }),
    });
    assert.match(JSON.stringify(await mcp.json()), /declares no task schema/);
  });
});
