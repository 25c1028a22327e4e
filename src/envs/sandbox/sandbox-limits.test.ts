import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { runFunction } from './function-runner.ts';
import { runInSandbox, sandboxMaxWallMs } from './sandbox.ts';

test('sandbox caps: a huge call list, code or input is refused before anything runs; the wall time is clamped whatever the call count', async () => {
  const calls = Array.from({ length: 20_000 }, () => [1]);
  const tooMany = await runFunction({ code: 'function f(x) { return x; }', entry: 'f', calls });
  assert.equal(tooMany.sandboxFailure, 'input');
  assert.match(tooMany.failure ?? '', /20000 calls over the cap of 1000 \(maxCalls\)/);
  const longCode = await runFunction({ code: `function f() {}/*${'x'.repeat(200_000)}*/`, entry: 'f', calls: [[]] });
  assert.match(longCode.failure ?? '', /code of \d+ characters over the cap of 100000 \(maxCodeChars\)/);
  const bigInput = await runInSandbox({ script: 'emit(1)', input: 'x'.repeat(2 << 20), maxInputBytes: 1 << 20 });
  assert.deepEqual([bigInput.ok, !bigInput.ok && bigInput.failure, bigInput.durationMs], [false, 'input', 0]);
  await assert.rejects(
    runInSandbox({ script: 'emit(1)', input: null, timeoutMs: 10_000_000 }),
    (error) => error instanceof InvalidArgumentError && new RegExp(`\\(0, ${sandboxMaxWallMs}\\]`).test(error.message),
  );
  // 1000 looping calls of 500 ms would be a 501.5 s budget; the run stops at maxWallMs instead
  const started = performance.now();
  const loops = await runFunction({
    code: 'function f() { while (true) {} }',
    entry: 'f',
    calls: Array.from({ length: 1000 }, () => []),
    maxWallMs: 1500,
  });
  const elapsed = performance.now() - started;
  assert.equal(loops.sandboxFailure, 'timeout');
  assert.ok(elapsed < 4000, `stopped after ${elapsed.toFixed(0)} ms`);
  const loud = await runInSandbox({
    script: "process.stdout.write('y'.repeat(1 << 16)); emit(1)",
    input: null,
    maxOutputBytes: 1000,
  });
  assert.deepEqual([loud.ok, !loud.ok && loud.failure], [false, 'output']);
});

test('sandbox abort: aborting the signal kills a blocked run at once; an aborted signal starts nothing', async () => {
  const controller = new AbortController();
  const started = performance.now();
  const blocked = runInSandbox({
    script: 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);',
    input: null,
    timeoutMs: 20_000,
    signal: controller.signal,
  });
  setTimeout(() => controller.abort(), 300);
  const result = await blocked;
  const elapsed = performance.now() - started;
  assert.deepEqual([result.ok, !result.ok && result.failure], [false, 'aborted']);
  assert.ok(elapsed < 3000, `ended ${elapsed.toFixed(0)} ms after it started`);
  const again = await runFunction({ code: 'function f() {}', entry: 'f', calls: [[]], signal: controller.signal });
  assert.equal(again.sandboxFailure, 'aborted');
});

test("sandbox files: a run starts in a scratch folder of its own, removed after, and writes nothing (no node_trace.1.log) into the trainer's working folder", async () => {
  const trainerFolder = mkdtempSync(join(tmpdir(), 'agentrl-trainer-cwd-'));
  const previous = process.cwd();
  process.chdir(trainerFolder);
  try {
    const result = await runInSandbox({
      script: `
        let tracing = 'off';
        try { require('node:trace_events').createTracing({ categories: ['node', 'v8'] }).enable(); tracing = 'on'; } catch {}
        setTimeout(() => emit({ cwd: process.cwd(), tracing }), 200);`,
      input: null,
    });
    assert.equal(result.ok, true, JSON.stringify(result));
    const { cwd, tracing } = (result.ok ? result.value : {}) as { cwd: string; tracing: string };
    assert.equal(tracing, 'off');
    assert.notEqual(cwd, trainerFolder);
    assert.equal(existsSync(cwd), false, 'the scratch folder is removed');
    const code = await runFunction({ code: 'function f() { return 1; }', entry: 'f', calls: [[]] });
    assert.deepEqual(code.results, [{ value: 1 }]);
    assert.deepEqual(readdirSync(trainerFolder), [], "the trainer's working folder gained no file");
  } finally {
    process.chdir(previous);
    rmSync(trainerFolder, { recursive: true, force: true });
  }
});

test('sandbox entropy: every read of Math.random or the clock is reported, by any path; a seed makes them repeatable', async () => {
  const reads = async (body: string, entropy?: { seed: number; clockMs: number }) =>
    runFunction({ code: `function f() { ${body} }`, entry: 'f', calls: [[], []], ...(entropy ? { entropy } : {}) });
  const clock = 'the clock (Date, Intl.DateTimeFormat)';
  const cases: Array<[string, string[]]> = [
    ['return Math.random();', ['Math.random']],
    ['return [1, 2, 3].sort(() => Math.random() - 0.5);', ['Math.random']],
    ['return Date.now();', [clock]],
    ['return new Date().getSeconds();', [clock]],
    ['return Date();', [clock]],
    ['return new (new Date(0).constructor)().getTime();', [clock]],
    ['return Reflect.construct(Date, []).getTime();', [clock]],
    ["return new Intl.DateTimeFormat('en', { second: 'numeric' }).format();", [clock]],
    ['return new Intl.DateTimeFormat().formatToParts().length;', [clock]],
    ['return [new Date(0).toISOString(), Date.UTC(2020, 1), new Date(5) instanceof Date];', []],
  ];
  for (const [body, expected] of cases) {
    const run = await reads(body);
    assert.deepEqual([run.failure, run.entropyRead], [null, expected], body);
  }
  const body = 'return [Math.random(), Date.now(), new Date().toISOString()];';
  const [first, same, other] = await Promise.all([
    reads(body, { seed: 7, clockMs: 1e12 }),
    reads(body, { seed: 7, clockMs: 1e12 }),
    reads(body, { seed: 8, clockMs: 2e12 }),
  ]);
  assert.deepEqual(first.results, same.results, 'the same seed and clock replay exactly');
  assert.notDeepEqual(first.results, other.results);
  assert.deepEqual((first.results[0] as { value: unknown[] }).value.slice(1), [1e12, new Date(1e12).toISOString()]);
});
