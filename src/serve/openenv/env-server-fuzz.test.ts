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
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { makeEnv } from '../../envs/index.ts';
import { OpenEnvClient } from './client.ts';
import { serializeReset, serializeStep } from './wire.ts';

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'agentrl.js');
const MESSAGES = 300;
const MAX_PAYLOAD = 8 * 1024 * 1024;
const errorCodes = [
  'INVALID_JSON',
  'UNKNOWN_TYPE',
  'VALIDATION_ERROR',
  'EXECUTION_ERROR',
  'CAPACITY_REACHED',
  'FACTORY_ERROR',
  'SESSION_ERROR',
];
const nastyKeys = [
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'prototype',
  'isPrototypeOf',
  '__defineGetter__',
  'then',
  'length',
  '',
  '\u0000',
  'ключ',
  '😀',
];
const fieldKeys = [
  'type',
  'data',
  'text',
  'tool_call',
  'name',
  'arguments',
  'metadata',
  'seed',
  'episode_id',
  'task',
  'jsonrpc',
  'method',
  'params',
  'id',
];
const types = [
  'reset',
  'step',
  'state',
  'mcp',
  'close',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  'RESET',
  '',
];
const methods = ['tools/list', 'tools/call', 'initialize', 'ping', 'resources/list', 'constructor', '__proto__'];

/** Random JSON text (written as text so `__proto__` and duplicate keys survive). */
function jsonText(rng: Rng, depth: number): string {
  const pick = rng.int(depth <= 0 ? 3 : 5);
  if (pick === 0) return scalarText(rng);
  if (pick === 1) return stringText(rng);
  if (pick === 2) return at(['null', 'true', 'false'], rng.int(3), 'literals');
  if (pick === 3) return `[${Array.from({ length: rng.int(4) }, () => jsonText(rng, depth - 1)).join(',')}]`;
  return objectText(rng, depth - 1);
}

function objectText(rng: Rng, depth: number, forced: [string, string][] = []): string {
  const entries = [...forced];
  for (let i = rng.int(5); i > 0; i--) {
    const key =
      rng.next() < 0.6
        ? at(nastyKeys, rng.int(nastyKeys.length), 'nasty keys')
        : rng.next() < 0.5
          ? at(fieldKeys, rng.int(fieldKeys.length), 'field keys')
          : randomChars(rng, rng.int(8));
    entries.splice(rng.int(entries.length + 1), 0, [JSON.stringify(key), jsonText(rng, depth)]);
  }
  return `{${entries.map(([key, value]) => `${key}:${value}`).join(',')}}`;
}

function scalarText(rng: Rng): string {
  const special = ['-0', '1e308', '-1e-308', '12345678901234567890', '0.1', '-1', '2147483648', '1.5'];
  return rng.next() < 0.5 ? at(special, rng.int(special.length), 'special numbers') : String(rng.int(1000) - 10);
}

function stringText(rng: Rng): string {
  if (rng.next() < 0.02) return JSON.stringify('y'.repeat(100_000 + rng.int(400_000)));
  const raw = JSON.stringify(randomChars(rng, rng.int(24)));
  return rng.next() < 0.1 ? `${raw.slice(0, -1)}\\ud800"` : raw; // a lone surrogate escape
}

function randomChars(rng: Rng, length: number): string {
  const alphabet = 'ab<>/"\\{}[]:, \n\t\u0000é😀\u2028';
  return Array.from({ length }, () => alphabet[rng.int(alphabet.length)]).join('');
}

/** A message that looks like one of the protocol's, with random omissions, extras and wrong types. */
function protocolText(rng: Rng): string {
  const type =
    rng.next() < 0.85 ? at(types, rng.int(5), 'message types') : at(types, rng.int(types.length), 'message types');
  const typeValue = rng.next() < 0.9 ? JSON.stringify(type) : jsonText(rng, 2);
  // Each field is present 70% of the time, and then of a random shape 20% of the time.
  const field = (key: string, value: string): [string, string][] =>
    rng.next() < 0.7 ? [[JSON.stringify(key), rng.next() < 0.8 ? value : jsonText(rng, 2)]] : [];
  let data: string;
  if (type === 'step') {
    const toolCall = objectText(rng, 2, [
      ...field('name', '"calculator"'),
      ...field('arguments', rng.next() < 0.5 ? `{"expression":"${rng.int(9)}+${rng.int(9)}"}` : objectText(rng, 2)),
    ]);
    data = objectText(rng, 2, [
      ...field('text', rng.next() < 0.5 ? '"<answer>4</answer>"' : stringText(rng)),
      ...field('tool_call', toolCall),
      ...field('metadata', objectText(rng, 3)),
    ]);
  } else if (type === 'reset') {
    data = objectText(rng, 2, [
      ...field('seed', scalarText(rng)),
      ...field('episode_id', stringText(rng)),
      ...field('task', jsonText(rng, 2)),
    ]);
  } else if (type === 'mcp') {
    const params = objectText(rng, 2, [...field('name', '"calculator"'), ...field('arguments', objectText(rng, 2))]);
    data = objectText(rng, 1, [
      ...field('jsonrpc', '"2.0"'),
      ...field('id', String(rng.int(100))),
      ...field('method', JSON.stringify(methods[rng.int(methods.length)])),
      ...field('params', params),
    ]);
  } else {
    data = jsonText(rng, 2);
  }
  const withData = type === 'state' || type === 'close' ? rng.next() < 0.2 : rng.next() < 0.95;
  const entries: [string, string][] = [
    ['"type"', typeValue],
    ...(withData ? ([['"data"', data]] as [string, string][]) : []),
  ];
  return rng.next() < 0.3
    ? objectText(rng, 0, entries)
    : `{${entries.map(([key, value]) => `${key}:${value}`).join(',')}}`;
}

type Fuzzed = { payload: string | Buffer; binary: boolean; label: string };

function fuzzMessage(rng: Rng, index: number): Fuzzed {
  if (index === 97 || index === 211)
    return {
      payload: `{"type":"step","data":{"text":"${'z'.repeat(MAX_PAYLOAD + 1024)}"}}`,
      binary: false,
      label: 'oversize',
    };
  const kind = rng.next();
  if (kind < 0.55) return { payload: protocolText(rng), binary: false, label: 'protocol' };
  if (kind < 0.7) {
    const whole = protocolText(rng);
    return { payload: whole.slice(0, rng.int(whole.length)), binary: false, label: 'truncated' };
  }
  if (kind < 0.82) return { payload: jsonText(rng, 4), binary: false, label: 'random JSON' };
  if (kind < 0.94) {
    const bytes = Buffer.alloc(rng.int(64) + 1);
    for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(256);
    return { payload: bytes, binary: true, label: 'binary' };
  }
  if (kind < 0.97)
    return {
      payload: `{"type":"step","data":{"text":"${'w'.repeat(1_000_000 + rng.int(2_000_000))}"}}`,
      binary: false,
      label: 'long string',
    };
  return {
    payload: `{"type":"step","data":{"text":"x","metadata":{"deep":${'['.repeat(50_000)}${']'.repeat(50_000)}}}}`,
    binary: false,
    label: 'deep nesting',
  };
}

/** May the server answer nothing? Only for a JSON-RPC notification (an mcp message without id). */
function mayBeSilent(payload: string | Buffer): boolean {
  try {
    const message = JSON.parse(payload.toString()) as { type?: unknown; data?: unknown };
    return (
      message?.type === 'mcp' &&
      typeof message.data === 'object' &&
      message.data !== null &&
      !Object.hasOwn(message.data, 'id')
    );
  } catch {
    return false;
  }
}

function isClose(payload: string | Buffer): boolean {
  try {
    const message = JSON.parse(payload.toString()) as Record<string, unknown>;
    return (
      typeof message === 'object' && message !== null && Object.keys(message).length === 1 && message.type === 'close'
    );
  } catch {
    return false;
  }
}

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
