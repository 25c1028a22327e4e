import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { codeTasksOf, makeCode, scoreSolution } from './env.ts';
import { codeExpert } from './expert.ts';
import { codeTasks } from './tasks.ts';

envContract('code', () => makeCode({ formatPenalty: 0.1 }), {
  makeExpert: codeExpert,
  seeds: splitSeeds('test', 3),
  invalidActions: ['<tool_call>{"name": "run", "arguments": {}}</tool_call>'],
  invalidActionReward: -0.1,
});

test('57 tasks with unique ids; every reference solution passes all its tests in the sandbox', async () => {
  assert.ok(codeTasks.length >= 50);
  assert.equal(new Set(codeTasks.map((task) => task.id)).size, codeTasks.length);
  const splits = ['train', 'validation', 'test'] as const;
  assert.equal(
    splits.reduce((n, split) => n + codeTasksOf(split).length, 0),
    codeTasks.length,
  );
  for (let i = 0; i < codeTasks.length; i += 4) {
    const batch = codeTasks.slice(i, i + 4);
    const scores = await Promise.all(
      batch.map(async (task) => ({
        task,
        score: await scoreSolution(task, task.solution, { callTimeoutMs: 1000, maxHeapMb: 64 }),
      })),
    );
    for (const { task, score } of scores) assert.equal(score.passed, score.total, `${task.id}: ${score.firstFailure}`);
  }
});

test('reward is the fraction of tests passed; errors and loops fail only their tests', async () => {
  const env = makeCode();
  const task = codeTasks.find((candidate) => candidate.id === 'fizzbuzz')!;
  await env.reset({ seed: 0, task });
  const partial = await env.step({
    text: "<answer>function fizzBuzz(n) { if (n === 7) while (true) {} return n % 3 === 0 ? 'Fizz' : 'Buzz'; }</answer>",
  });
  assert.equal(partial.reward, 0.5);
  assert.equal(partial.info.success, false);
  assert.match(partial.observation.text, /passed 2\/4 tests; fizzBuzz\(15\) gave "Fizz", expected "FizzBuzz"/);
  await env.reset({ seed: 0, task });
  const syntax = await env.step({ text: '<answer>function fizzBuzz(n) { return </answer>' });
  assert.equal(syntax.reward, 0);
  assert.match(syntax.observation.text, /passed 0\/4 tests; Unexpected/);
  await env.reset({ seed: 0, task });
  const wrongName = await env.step({ text: '<answer>function fizz(n) { return 1; }</answer>' });
  assert.match(wrongName.observation.text, /no function named fizzBuzz/);
});

test('code expert passes every held-out task; a random stub does not', async () => {
  const env = makeCode();
  const seeds = splitSeeds('test', codeTasksOf('test').length);
  const [expert, random] = [0, 0];
  let expertWins = expert;
  let randomWins = random;
  for (const seed of seeds) {
    if ((await playEpisode(env, codeExpert({ seed }), seed)).success) expertWins++;
    if ((await playEpisode(env, codeExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, seeds.length);
  assert.equal(randomWins, 0);
});

test('code attacks: forged per-call results, escapes, signals and network all score 0 without step throwing', async () => {
  const env = makeCode();
  const task = codeTasks.find((candidate) => candidate.id === 'fizzbuzz')!;
  const attacks = [
    "JSON.stringify = () => '5'; function fizzBuzz(n) { return 1; }",
    "JSON.stringify = () => '[]'; function fizzBuzz(n) { return 1; }",
    "function fizzBuzz(n) { const p = this.constructor.constructor('return process')(); p.kill(p.ppid, 'SIGSTOP'); return 'Fizz'; }",
    "function fizzBuzz(n) { process.kill(process.ppid, 'SIGKILL'); require('node:dgram').createSocket('udp4').send('x', 9, '127.0.0.1'); return 'Fizz'; }",
  ];
  for (const code of attacks) {
    await env.reset({ seed: 0, task });
    const result = await env.step({ text: `<answer>${code}</answer>` });
    assert.deepEqual(
      [result.done, result.reward, result.info.success],
      [true, 0, false],
      `${code}: ${result.observation.text}`,
    );
  }
});
