import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runFunction } from './function-runner.ts';
import { probeNamespaces, SandboxUnavailableError } from './namespaces.ts';
import { runInSandbox } from './sandbox.ts';

const folder = mkdtempSync(join(tmpdir(), 'agentrl-sandbox-'));
const outside = mkdtempSync(join(tmpdir(), 'agentrl-outside-'));
writeFileSync(join(folder, 'task.txt'), 'inside');
writeFileSync(join(outside, 'secret.txt'), 'secret');
let connections = 0;
const server = createServer((_request, response) => response.end('reached'));
server.on('connection', () => connections++);
let port = 0;

before(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
after(() => {
  server.close();
  rmSync(folder, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

test('sandbox: files inside the task folder are readable, nothing outside it is', async () => {
  const read = (path: string) =>
    runInSandbox({
      script: `emit(require('node:fs').readFileSync(${JSON.stringify(path)}, 'utf8'))`,
      input: null,
      allowRead: [folder],
    });
  assert.deepEqual((await read(join(folder, 'task.txt'))).ok, true);
  for (const path of [join(outside, 'secret.txt'), '/etc/passwd', join(process.cwd(), 'package.json')]) {
    const result = await read(path);
    assert.equal(result.ok, false, path);
    assert.match(!result.ok ? result.message : '', /Access to this API has been restricted/);
  }
  const write = await runInSandbox({
    script: `require('node:fs').writeFileSync(${JSON.stringify(join(folder, 'x'))}, 'x'); emit(1)`,
    input: null,
    allowRead: [folder],
  });
  assert.equal(write.ok, false);
  const spawn = await runInSandbox({
    script: "emit(require('node:child_process').execSync('cat /etc/passwd').length)",
    input: null,
  });
  assert.match(!spawn.ok ? spawn.message : '', /Access to this API has been restricted/);
});

test('sandbox: no network — fetch, sockets and http never reach a live 127.0.0.1 server', async () => {
  const attempts = [
    `fetch('http://127.0.0.1:${port}/').then(() => emit('reached'), (e) => emit(String(e)))`,
    `emit(String(require('node:net').connect(${port}, '127.0.0.1')))`,
    `require('node:http').get('http://127.0.0.1:${port}/', () => emit('reached'))`,
    `new (require('node:net').Socket)().connect(${port}, '127.0.0.1', () => emit('reached'))`,
  ];
  for (const script of attempts) {
    const result = await runInSandbox({ script, input: null, timeoutMs: 2000 });
    assert.equal(result.ok, false, script);
    assert.match(!result.ok ? result.message : '', /fetch is not defined|network access is denied/, script);
  }
  const escapeAttempt = await runFunction({
    code: "function f() { return this.constructor.constructor('return process')().pid; }",
    entry: 'f',
    calls: [[]],
  });
  assert.deepEqual(escapeAttempt.results, [{ error: 'Code generation from strings disallowed for this context' }]);
  const globals = await runFunction({
    code: 'function f() { return [typeof process, typeof require, typeof fetch, typeof setTimeout].join(); }',
    entry: 'f',
    calls: [[]],
  });
  assert.deepEqual(globals.results, [{ value: 'undefined,undefined,undefined,undefined' }]);
  const load = await runFunction({
    code: `let state = 'pending'; import('node:net').then(() => { state = 'imported'; }, (error) => { state = error.code; }); function f() { return state; }`,
    entry: 'f',
    calls: [[]],
  });
  assert.deepEqual(load.results, [{ value: 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING' }]);
  assert.equal(connections, 0, 'the server saw no connection');
});

test('sandbox: a runaway loop is killed within its limit, in the process and inside a call', async () => {
  const started = performance.now();
  const loop = await runInSandbox({ script: 'while (true) {}', input: null, timeoutMs: 800 });
  const elapsed = performance.now() - started;
  assert.deepEqual([loop.ok, !loop.ok && loop.failure], [false, 'timeout']);
  assert.ok(elapsed < 800 + 700, `took ${elapsed.toFixed(0)} ms`);
  const promises = await runInSandbox({
    script: '(async () => { for (;;) await null; })();',
    input: null,
    timeoutMs: 800,
  });
  assert.deepEqual([promises.ok, !promises.ok && promises.failure], [false, 'timeout']);
  const call = await runFunction({
    code: 'function f(x) { if (x) while (true) {} return 1; }',
    entry: 'f',
    calls: [[true], [false]],
    callTimeoutMs: 300,
  });
  assert.deepEqual(call.results, [{ error: 'Script execution timed out after 300ms' }, { value: 1 }]);
});

test('sandbox: memory bombs (heap and typed arrays) are stopped; the host survives all of the above', async () => {
  const heap = await runInSandbox({
    script: 'const a = []; while (true) a.push(new Array(1e5).fill(1));',
    input: null,
    timeoutMs: 5000,
  });
  assert.deepEqual([heap.ok, !heap.ok && heap.failure], [false, 'memory']);
  const buffers = await runInSandbox({
    script: 'const a = []; while (true) a.push(new Uint8Array(50e6).fill(1));',
    input: null,
    timeoutMs: 5000,
  });
  assert.deepEqual([buffers.ok, !buffers.ok && buffers.failure], [false, 'memory']);
  const inCall = await runFunction({
    code: 'function f() { const a = []; while (true) a.push(new Array(1e5).fill(1)); }',
    entry: 'f',
    calls: [[]],
    callTimeoutMs: 5000,
  });
  assert.equal(inCall.sandboxFailure, 'memory');
  const fine = await runFunction({ code: 'function add(a, b) { return a + b; }', entry: 'add', calls: [[2, 3]] });
  assert.deepEqual(fine, { failure: null, results: [{ value: 5 }], entropyRead: [] });
  assert.ok(process.memoryUsage().heapUsed < 512 * 2 ** 20);
});

test('sandbox namespaces: even code holding `process` sends no UDP or DNS to 127.0.0.1 and signals nothing outside', async () => {
  const udp = createSocket('udp4');
  const datagrams: string[] = [];
  udp.on('message', (message) => datagrams.push(message.toString('latin1')));
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const udpPort = udp.address().port;
  const decoy = spawn('sleep', ['30'], { stdio: 'ignore' });
  try {
    const attack = `
      const dgram = require('node:dgram'), dns = require('node:dns');
      const report = [];
      const udp = new dgram.Socket({ type: 'udp4', lookup: (host, family, callback) => callback(null, '127.0.0.1', 4) });
      udp.on('error', (error) => report.push('udp ' + error.code));
      udp.send('udp-leak', ${udpPort}, '127.0.0.1', (error) => report.push('udp sent ' + (error ? error.code : 'ok')));
      const resolver = new dns.Resolver();
      resolver.setServers(['127.0.0.1:${udpPort}']);
      resolver.resolve4('dns-leak.example', (error) => report.push('dns ' + (error ? error.code : 'answered')));
      for (const target of [${decoy.pid}, process.ppid, 0, -1]) {
        try { process.kill(target, target === ${decoy.pid} ? 'SIGKILL' : 'SIGCONT'); report.push('signalled ' + target); } catch (error) { report.push('kill ' + error.code); }
      }
      setTimeout(() => emit({ pid: process.pid, ppid: process.ppid, report }), 400);
    `;
    const result = await runInSandbox({ script: attack, input: null, timeoutMs: 3000 });
    assert.equal(result.ok, true, JSON.stringify(result));
    const value = (result.ok ? result.value : null) as { pid: number; ppid: number; report: string[] };
    assert.deepEqual([value.pid, value.ppid], [1, 0], 'PID 1 of its own namespace');
    assert.ok(value.report.includes('kill ESRCH'), value.report.join('; '));
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.deepEqual(datagrams, [], 'no datagram reached 127.0.0.1');
    assert.deepEqual([decoy.exitCode, decoy.signalCode], [null, null], 'the decoy outside was not signalled');
  } finally {
    decoy.kill('SIGKILL');
    udp.close();
  }
});

test('sandbox result channel: a result line without the run nonce is not accepted', async () => {
  const forged = await runInSandbox({
    script:
      "process.stdout.write('\\u0000SANDBOX-RESULT\\u0000' + JSON.stringify('forged') + '\\n', () => process.exit(0));",
    input: null,
  });
  assert.deepEqual([forged.ok, !forged.ok && forged.failure], [false, 'crash']);
  const real = await runInSandbox({
    script: "process.stdout.write('\\u0000SANDBOX-RESULT\\u0000\"forged\"\\n'); emit('real')",
    input: null,
  });
  assert.deepEqual(real.ok && real.value, 'real');
});

test('sandbox without namespaces refuses with a typed error naming what is missing, unless the weaker mode is asked for', async () => {
  assert.equal(probeNamespaces().available, true, 'namespaces work on this machine');
  const missing = '/nonexistent/unshare';
  assert.equal(probeNamespaces(missing).available, false);
  await assert.rejects(runInSandbox({ script: 'emit(1)', input: null, unshareCommand: missing }), (error: unknown) => {
    assert.ok(error instanceof SandboxUnavailableError);
    assert.match(error.message, /network and PID namespaces.*\/nonexistent\/unshare.*isolation: 'process-only'/);
    assert.equal(error.details.missing, 'network and PID namespaces (unshare --net --pid)');
    return true;
  });
  const weaker = await runInSandbox({
    script: 'emit(process.pid > 1)',
    input: null,
    unshareCommand: missing,
    isolation: 'process-only',
  });
  assert.deepEqual(weaker.ok && weaker.value, true);
  const refused = await runFunction({
    code: 'function f() { return 1; }',
    entry: 'f',
    calls: [[]],
    unshareCommand: missing,
  });
  assert.deepEqual(
    [refused.sandboxFailure, refused.results],
    ['unavailable', []],
    'runFunction reports it as a failure, never a throw',
  );
});

test('sandbox: a sandboxed process that blocks without using CPU dies at its wall-clock limit even when the trainer is SIGKILLed', async () => {
  const token = `agentrl-orphan-${process.pid}-${Date.now()}`;
  const sandboxUrl = new URL('./sandbox.ts', import.meta.url).href;
  const trainerScript =
    `import { runInSandbox } from ${JSON.stringify(sandboxUrl)};` +
    `runInSandbox({ script: ${JSON.stringify(`/* ${token} */ Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);`)}, input: null, timeoutMs: 1000 });` +
    'setInterval(() => {}, 1000);';
  const trainer = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', trainerScript], {
    stdio: 'ignore',
  });
  const sandboxAlive = (): boolean => {
    const found = spawnSync('pgrep', ['-f', token], { encoding: 'utf8' });
    return found.stdout.split('\n').some((pid) => pid.trim() !== '' && Number(pid) !== trainer.pid);
  };
  try {
    const until = Date.now() + 20_000;
    while (!sandboxAlive()) {
      assert.ok(Date.now() < until, 'the sandbox process started');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    trainer.kill('SIGKILL');
    const deadline = Date.now() + 8_000; // the 1 s limit + the kill's margin, with room for a loaded machine
    while (sandboxAlive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(sandboxAlive(), false, 'the orphaned sandbox process is gone after its wall-clock limit');
  } finally {
    trainer.kill('SIGKILL');
    spawnSync('pkill', ['-KILL', '-f', token]);
  }
});
