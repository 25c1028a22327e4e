import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatAnswer } from '../action-format.ts';
import { makeAbsoluteZero } from './env.ts';
import { referencePrograms } from './programs.ts';

const propose = (program: string, input: unknown) => formatAnswer(JSON.stringify({ program, input }));

/** Programs whose output depends on chance or on the time: none may ever become a task. */
const coinFlips = [
  "function f(x) { return Math.random() < 0.5 ? 'heads' : 'tails'; }",
  'function f(x) { return Math.random() < 0.999; }',
  'const coin = Math.random() < 0.5; function f(x) { return coin; }',
  'function f(x) { return [1, 2, 3].sort(() => Math.random() - 0.5)[0]; }',
  'function f(x) { return Date.now() % 2 === 0; }',
  'function f(x) { return new Date().getUTCFullYear() % 2; }',
  'function f(x) { return Date().length > 0; }',
  'function f(x) { return new (new Date(0).constructor)().getSeconds() < 30; }',
  'function f(x) { return Reflect.construct(Date, []).getTime() > 0; }',
  "function f(x) { return new Intl.DateTimeFormat('en', { year: 'numeric' }).format() > '2000'; }",
  'function f(x) { return crypto.randomUUID() < "8"; }',
  'function f(x) { return performance.now() % 2 < 1; }',
];

test('absolute-zero determinism: no coin-flip or clock-reading program is ever accepted as a task', async () => {
  const env = makeAbsoluteZero();
  for (const program of coinFlips) {
    await env.reset({ seed: 1 });
    const result = await env.step({ text: propose(program, 1) });
    assert.deepEqual(
      [result.done, result.reward, result.info.rejected],
      [true, 0, true],
      `${program}: ${result.observation.text}`,
    );
  }
  await env.reset({ seed: 1 });
  const coin = await env.step({ text: propose(coinFlips[0] ?? '', 1) });
  assert.match(coin.observation.text, /task rejected: f reads Math\.random; a task must be deterministic/);
});

test('absolute-zero determinism: every reference program is still accepted, dates from fixed numbers too', async () => {
  const env = makeAbsoluteZero();
  const programs = [
    ...referencePrograms.map(({ program, input }) => ({
      program,
      input: input === 'int' ? 5 : input === 'ints' ? [3, 1, 2] : 'apple pie',
    })),
    { program: 'function f(x) { return new Date(x * 86400000).toISOString().slice(0, 10); }', input: 3 },
  ];
  for (const { program, input } of programs) {
    await env.reset({ seed: 1 });
    const result = await env.step({ text: propose(program, input) });
    assert.equal(result.info.rejected, undefined, `${program}: ${result.observation.text}`);
    assert.equal(result.done, false);
  }
});

test('absolute-zero close(): a proposal being executed is killed and rejected at once; the env plays on', async () => {
  const env = makeAbsoluteZero();
  await env.reset({ seed: 1 });
  const started = performance.now();
  const step = env.step({ text: propose('function f(x) { while (true) {} }', 1) });
  setTimeout(() => void env.close(), 150);
  const result = await step;
  assert.deepEqual([result.done, result.info.rejected], [true, true]);
  assert.ok(performance.now() - started < 2000, 'killed before its 300 ms × 2 calls + 1.5 s budget ran out');
  assert.match(result.observation.text, /aborted/);
  await env.reset({ seed: 2 });
  const after = await env.step({ text: propose('function f(x) { return x + 1; }', 1) });
  assert.equal(after.done, false);
});
