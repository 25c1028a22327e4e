/**
 * A seeded message fuzz of `agentrl serve-env` in its own process: a few hundred generated
 * WebSocket messages (random JSON shapes, keys such as `constructor` and `__proto__`, wrong types,
 * truncated JSON, long strings, binary and oversize frames), each followed by a `ping` sentinel, so
 * every message is seen to get its reply (or a clean close) before the next one is sent. A second
 * session plays calculator episodes against a local copy of the env throughout.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import WebSocket from 'ws';
import { Rng } from '../../core/rng.ts';
import { makeEnv } from '../../envs/index.ts';
import { OpenEnvClient } from './client.ts';
import { type Fuzzed, fuzzMessage, isClose, mayBeSilent } from './fuzz-messages.ts';
import { serializeReset, serializeStep } from './wire.ts';

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'agentrl.js');
const MESSAGES = 300;
const errorCodes = [
  'INVALID_JSON',
  'UNKNOWN_TYPE',
  'VALIDATION_ERROR',
  'EXECUTION_ERROR',
  'CAPACITY_REACHED',
  'FACTORY_ERROR',
  'SESSION_ERROR',
];

/** A fuzzing connection: sends one message plus a sentinel ping, returns the replies before the sentinel's, or the close code. */
class FuzzConnection {
  private ws: WebSocket | null = null;
  private replies: unknown[] = [];
  private wake: (() => void) | null = null;
  private closeCode: number | null = null;
  private sentinel = 0;
  constructor(private readonly url: string) {}

  async exchange(fuzzed: Fuzzed): Promise<{ replies: unknown[] } | { closed: number }> {
    const ws = await this.open();
    const id = `sentinel-${++this.sentinel}`;
    ws.send(fuzzed.payload, { binary: fuzzed.binary });
    if (ws.readyState === WebSocket.OPEN)
      ws.send(JSON.stringify({ type: 'mcp', data: { jsonrpc: '2.0', id, method: 'ping' } }));
    const deadline = Date.now() + 30_000;
    for (;;) {
      const at = this.replies.findIndex((reply) => (reply as { data?: { id?: unknown } }).data?.id === id);
      if (at >= 0) {
        const before = this.replies.slice(0, at);
        this.replies = this.replies.slice(at + 1);
        return { replies: before };
      }
      if (this.closeCode !== null) {
        const closed = this.closeCode;
        this.ws = null;
        return { closed };
      }
      const left = deadline - Date.now();
      assert.ok(
        left > 0,
        `no reply and no close within 30 s after a ${fuzzed.label} message: ${fuzzed.payload.toString().slice(0, 200)}`,
      );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  terminate(): void {
    this.ws?.terminate();
  }

  private async open(): Promise<WebSocket> {
    if (this.ws !== null) return this.ws;
    const ws = new WebSocket(this.url, { maxPayload: 64 * 1024 * 1024 });
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    this.replies = [];
    this.closeCode = null;
    ws.on('message', (raw) => {
      this.replies.push(JSON.parse(raw.toString()));
      this.wake?.();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      this.wake?.();
    });
    ws.on('error', () => {});
    this.ws = ws;
    return ws;
  }
}

async function startServeEnv(): Promise<{ child: ChildProcess; url: string; stderr: () => string }> {
  const child = spawn(process.execPath, [bin, 'serve-env', 'calculator', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve-env did not start within 60 s: ${text}`)), 60_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const url = /on (http:\/\/[0-9.:]+)/.exec(text)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        resolve(url);
      }
    });
    child.once('exit', (code) => reject(new Error(`serve-env exited ${code}: ${text}`)));
  });
  return { child, url, stderr: () => text };
}

/** Plays calculator episodes on the server and on a local env with the same seeds until `stop()`. */
function witness(url: string): { stop(): Promise<number> } {
  let stopping = false;
  const run = (async () => {
    const session = await new OpenEnvClient(url, { timeoutMs: 30_000 }).session();
    let checks = 0;
    for (let seed = 1; !stopping || checks === 0; seed++) {
      const local = makeEnv('calculator');
      const observation = await local.reset({ seed });
      assert.deepEqual(await session.reset({ seed }), serializeReset(observation));
      const expression = (observation.data as { expression: string }).expression;
      const action = { text: '', toolCall: { id: 'call_0', name: 'calculator', arguments: { expression } } };
      const expected = JSON.parse(JSON.stringify(serializeStep(await local.step(action))));
      assert.deepEqual(
        await session.step({ text: '', tool_call: { id: 'call_0', name: 'calculator', arguments: { expression } } }),
        expected,
      );
      assert.equal((await session.state()).step_count, 1);
      checks++;
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await session.close();
    return checks;
  })();
  run.catch(() => {}); // its failure is reported by stop()
  return {
    stop: () => {
      stopping = true;
      return run;
    },
  };
}

test(`serve-env survives ${MESSAGES} fuzzed WebSocket messages; every one is answered or cleanly closed; a parallel session is unaffected`, {
  timeout: 300_000,
}, async (t) => {
  const { child, url, stderr } = await startServeEnv();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const connection = new FuzzConnection(`${url.replace('http', 'ws')}/ws`);
  const rng = new Rng(20_240_914);
  try {
    const parallel = witness(url);
    const tally: Record<string, number> = {};
    for (let index = 0; index < MESSAGES; index++) {
      const fuzzed = fuzzMessage(rng, index);
      const shown = `#${index} ${fuzzed.label}: ${fuzzed.payload.toString().slice(0, 300)}`;
      const outcome = await connection.exchange(fuzzed);
      assert.equal(child.exitCode, null, `the server exited after ${shown}\n${stderr()}`);
      if ('closed' in outcome && outcome.closed === 1006) {
        const exit = await Promise.race([
          exited,
          new Promise((resolve) => setTimeout(() => resolve('none yet'), 2_000)),
        ]);
        assert.fail(`the server dropped the connection (exit code: ${String(exit)}) after ${shown}\n${stderr()}`);
      }
      if ('closed' in outcome) {
        const expected = fuzzed.label === 'oversize' ? 1009 : isClose(fuzzed.payload) ? 1000 : -1;
        assert.equal(outcome.closed, expected, `unexpected close after ${shown}`);
        tally[`closed ${outcome.closed}`] = (tally[`closed ${outcome.closed}`] ?? 0) + 1;
        continue;
      }
      const { replies } = outcome;
      assert.ok(
        replies.length === 1 || (replies.length === 0 && mayBeSilent(fuzzed.payload)),
        `${replies.length} replies after ${shown}`,
      );
      for (const reply of replies as { type: string; data: { code?: unknown; message?: unknown } }[]) {
        assert.ok(
          ['observation', 'state', 'mcp', 'error'].includes(reply.type),
          `reply type ${reply.type} after ${shown}`,
        );
        if (reply.type === 'error') {
          assert.ok(
            errorCodes.includes(String(reply.data.code)),
            `error code ${String(reply.data.code)} after ${shown}`,
          );
          assert.equal(typeof reply.data.message, 'string');
        }
        const key = reply.type === 'error' ? String(reply.data.code) : reply.type;
        tally[key] = (tally[key] ?? 0) + 1;
      }
    }
    const checks = await parallel.stop();
    t.diagnostic(`replies: ${JSON.stringify(tally)}; parallel session: ${checks} episodes`);
    assert.ok(checks >= 5, `the parallel session played ${checks} episodes`);
    for (const kind of [
      'INVALID_JSON',
      'UNKNOWN_TYPE',
      'VALIDATION_ERROR',
      'observation',
      'closed 1000',
      'closed 1009',
    ]) {
      assert.ok((tally[kind] ?? 0) > 0, `the fuzz reached ${kind}: ${JSON.stringify(tally)}`);
    }
    assert.deepEqual(await (await fetch(`${url}/health`)).json(), { status: 'healthy' });
    assert.equal(child.exitCode, null, stderr());
  } finally {
    connection.terminate();
    child.kill('SIGTERM');
    await exited;
  }
});
