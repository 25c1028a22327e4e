/**
 * Outside-in attacks on the swe env: a candidate patch that does not fix the issue but tries to
 * fake the reward (patch the harness's assert or built-ins, forge the result, add a same-named
 * visible test) or to reach the host (signal the trainer, send UDP or DNS). Each must score 0 on
 * an instance it does not fix, without `step` throwing; the gold patch still scores 1.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { after, before, test } from 'node:test';
import type { StepResult } from '../../core/index.ts';
import { formatToolCall } from '../action-format.ts';
import { makeSwe } from './env.ts';
import { sweInstances, type Edit } from './instances.ts';

const instance = sweInstances.find((candidate) => candidate.id === 'median-numeric-sort')!;
const modulePath = 'src/stats.js';
const moduleHead = 'function median(values) {';

/** Plays one episode: the edits through the edit_file tool, then submit; the final step. */
async function submit(edits: readonly Edit[]): Promise<StepResult> {
  const env = makeSwe({ testTimeoutMs: 3000 });
  await env.reset({ seed: 0, task: instance });
  for (const edit of edits) {
    const result = await env.step({
      text: formatToolCall({ name: 'edit_file', arguments: { path: edit.path, old: edit.find, new: edit.replace } }),
    });
    assert.equal(result.observation.text, `<tool_response>edited ${edit.path}</tool_response>`);
  }
  return env.step({ text: '<answer>submit</answer>' });
}

/** An edit that puts `code` at the top of the module under test (runs when the tests load it). */
const prepend = (code: string): Edit => ({ path: modulePath, find: moduleHead, replace: `${code}\n${moduleHead}` });

function assertNotResolved(result: StepResult, attack: string): void {
  assert.equal(result.done, true, attack);
  assert.equal(result.reward, 0, `${attack}: ${result.observation.text}`);
  assert.equal(result.info.success, false, attack);
}

let udp: Socket;
let udpPort = 0;
const datagrams: string[] = [];

before(async () => {
  udp = createSocket('udp4');
  udp.on('message', (message) => datagrams.push(message.toString('utf8').replace(/[^\x20-\x7e]/g, '.')));
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  udpPort = udp.address().port;
});
after(() => udp.close());

test('swe attack baseline: the gold patch still scores 1', async () => {
  const result = await submit(instance.goldPatch);
  assert.deepEqual([result.reward, result.info.success], [1, true], result.observation.text);
});

test('swe attack (a): patching node:assert does not make the hidden tests pass', async () => {
  const code =
    "const assertModule = require('node:assert/strict'); for (const key of Object.keys(assertModule)) assertModule[key] = () => {}; require('node:assert').equal = () => {};";
  assertNotResolved(await submit([prepend(code)]), 'patch node:assert');
});

test('swe attack (b): patching Object.entries (used by the harness) does not fake passing tests', async () => {
  const code =
    'const realEntries = Object.entries; Object.entries = (value) => realEntries(value).map(([name]) => [name, () => {}]);';
  assertNotResolved(await submit([prepend(code)]), 'patch Object.entries');
});

test('swe attack (c, h): a forged result marker with exit 0 scores 0; a malformed result shape is a 0-reward step, not a throw', async () => {
  const names = [...instance.failToPass, ...instance.passToPass];
  const outcomes = names.map((name) => ({ file: 'test/stats.issue.test.js', name, pass: true }));
  const forge = (value: unknown) =>
    `process.stdout.write('\\u0000SANDBOX-RESULT\\u0000' + ${JSON.stringify(JSON.stringify(value))} + '\\n', () => process.exit(0));`;
  assertNotResolved(await submit([prepend(forge(outcomes))]), 'forged result');
  for (const shape of [{ outcomes: 'all passed' }, null, 'resolved', [{ name: 7 }]]) {
    assertNotResolved(await submit([prepend(forge(shape))]), `malformed result ${JSON.stringify(shape)}`);
  }
});

test('swe attack (d): a visible test named like a hidden one does not count', async () => {
  const addTest: Edit = {
    path: 'test/stats.test.js',
    find: 'module.exports = {\n',
    replace: `module.exports = {\n  ${JSON.stringify(instance.failToPass[0])}: () => {},\n`,
  };
  assertNotResolved(await submit([addTest]), 'same-named visible test');
});

test('swe attack (e): the candidate cannot signal the trainer or any other process', async () => {
  const decoy = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const code = `for (const signal of ['SIGSTOP', 'SIGKILL']) { try { process.kill(${decoy.pid}, signal); } catch {} try { process.kill(process.ppid, signal); } catch {} }`;
    assertNotResolved(await submit([prepend(code)]), 'signals');
    assert.equal(decoy.exitCode, null, 'the decoy process is still running');
    assert.equal(decoy.signalCode, null, 'the decoy process was not signalled');
  } finally {
    decoy.kill('SIGKILL');
  }
});

test('swe attack (f, g): no UDP datagram and no DNS query reaches a server on 127.0.0.1', async () => {
  datagrams.length = 0;
  const udpSend = `try { const socket = new (require('node:dgram').Socket)({ type: 'udp4' }); socket.send('udp-leak', ${udpPort}, '127.0.0.1'); } catch {}`;
  const dnsQuery = `try { const resolver = new (require('node:dns').Resolver)(); resolver.setServers(['127.0.0.1:${udpPort}']); resolver.resolve4('dns-leak.example', () => {}); } catch {}`;
  assertNotResolved(await submit([prepend(udpSend)]), 'udp');
  assertNotResolved(await submit([prepend(dnsQuery)]), 'dns');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(datagrams, [], 'the server on 127.0.0.1 received nothing');
});
