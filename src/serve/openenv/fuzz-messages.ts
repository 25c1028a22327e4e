/**
 * The seeded messages env-server-fuzz.test.ts sends to `agentrl serve-env`: random JSON shapes, keys
 * such as `constructor` and `__proto__`, wrong types, truncated JSON, long strings, binary and
 * oversize frames; and what the server may answer to one (nothing for a notification, a clean close
 * for `{"type":"close"}`).
 */
import { at } from '../../core/indexing.ts';
import type { Rng } from '../../core/rng.ts';

const MAX_PAYLOAD = 8 * 1024 * 1024;
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

export type Fuzzed = { payload: string | Buffer; binary: boolean; label: string };

export function fuzzMessage(rng: Rng, index: number): Fuzzed {
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
export function mayBeSilent(payload: string | Buffer): boolean {
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

export function isClose(payload: string | Buffer): boolean {
  try {
    const message = JSON.parse(payload.toString()) as Record<string, unknown>;
    return (
      typeof message === 'object' && message !== null && Object.keys(message).length === 1 && message.type === 'close'
    );
  } catch {
    return false;
  }
}
