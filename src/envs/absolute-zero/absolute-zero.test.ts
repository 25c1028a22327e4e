import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatAnswer } from '../action-format.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { learnabilityReward, makeAbsoluteZero, solves, type AbsoluteZeroData } from './env.ts';
import { absoluteZeroExpert } from './expert.ts';

envContract('absolute-zero', () => makeAbsoluteZero({ formatPenalty: 0.1 }), {
  makeExpert: absoluteZeroExpert,
  seeds: splitSeeds('test', 3),
  invalidActions: [
    '<answer>not json</answer>',
    '<answer>{"program": "function g() {}", "input": 1}</answer>',
    '<answer>{"program": "function f(x) {}"}</answer>',
  ],
  invalidActionReward: -0.1,
});

const propose = (program: string, input: unknown) => formatAnswer(JSON.stringify({ program, input }));

test('the executor verifies a proposal: errors, loops and non-determinism are rejected', async () => {
  const env = makeAbsoluteZero();
  for (const program of [
    'function f(x) { throw new Error("no"); }',
    'function f(x) { while (true) {} }',
    'function f(x) { return Math.random(); }',
  ]) {
    await env.reset({ seed: 1 });
    const result = await env.step({ text: propose(program, 1) });
    assert.deepEqual(
      [result.done, result.reward, result.info.rejected, result.info.success],
      [true, 0, true, false],
      program,
    );
    assert.match(result.observation.text, /^task rejected: /);
  }
  await env.reset({ seed: 1 });
  const accepted = await env.step({ text: propose('function f(x) { return [x, x * 2]; }', 3) });
  assert.equal(accepted.done, false);
  assert.deepEqual((accepted.observation.data as AbsoluteZeroData).proposal, {
    program: 'function f(x) { return [x, x * 2]; }',
    input: 3,
  });
  assert.deepEqual(accepted.observation.privileged, { output: [3, 6] }, "the executor's output is privileged");
  assert.equal(
    accepted.observation.text,
    'Solve: what does f return?\nfunction f(x) { return [x, x * 2]; }\nInput: 3\nReply the output as JSON: <answer>13</answer>',
  );
  const solved = await env.step({ text: '<answer>[3, 6]</answer>' });
  assert.deepEqual([solved.reward, solved.done, solved.info.success], [1, true, true]);
});

test('the proposer is rewarded for learnable tasks: 1 − solve rate when strictly between 0 and 1', async () => {
  assert.deepEqual([0, 0.25, 0.5, 1].map(learnabilityReward), [0, 0.75, 0.5, 0]);
  assert.ok(
    solves('<answer>"abc"</answer>', 'abc') &&
      solves('<answer>abc</answer>', 'abc') &&
      !solves('<answer>[1,2]</answer>', [2, 1]),
  );
  const prompts: string[] = [];
  let replies = ['<answer>9</answer>', '<answer>9</answer>', '<answer>8</answer>', 'junk'];
  const env = makeAbsoluteZero(
    { solverSamples: 4 },
    {
      solver: async (prompt, count) => {
        prompts.push(prompt);
        return replies.slice(0, count);
      },
    },
  );
  await env.reset({ seed: 1 });
  const learnable = await env.step({ text: propose('function f(x) { return x * x; }', 3) });
  assert.deepEqual([learnable.info.solveRate, learnable.reward], [0.5, 0.5]);
  assert.equal(prompts[0], learnable.observation.text, 'the solver sees the solve prompt');
  replies = ['<answer>9</answer>', '<answer>9</answer>', '<answer>9</answer>', '<answer>9</answer>'];
  await env.reset({ seed: 1 });
  const trivial = await env.step({ text: propose('function f(x) { return 9; }', 0) });
  assert.deepEqual([trivial.info.solveRate, trivial.reward], [1, 0]);
});

test('the expert proposes valid tasks and solves them 10/10; random solving does not', async () => {
  const env = makeAbsoluteZero();
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of splitSeeds('test', 10)) {
    if ((await playEpisode(env, absoluteZeroExpert({ seed }), seed)).success) expertWins++;
    if ((await playEpisode(env, absoluteZeroExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, 10);
  assert.ok(randomWins <= 2, `random ${randomWins}/10`);
});

test('absolute-zero attacks: per-process randomness, forged results and escapes are rejected as tasks; over-cap inputs are invalid', async () => {
  const env = makeAbsoluteZero();
  const rejected = [
    'const drawn = Math.random(); function f(x) { return drawn; }',
    "JSON.stringify = () => 'null'; function f(x) { return 1; }",
    "function f(x) { return this.constructor.constructor('return process')().pid; }",
    "function f(x) { process.kill(process.ppid, 'SIGSTOP'); return 1; }",
  ];
  for (const program of rejected) {
    await env.reset({ seed: 1 });
    const result = await env.step({ text: propose(program, 1) });
    assert.deepEqual(
      [result.done, result.reward, result.info.rejected],
      [true, 0, true],
      `${program}: ${result.observation.text}`,
    );
  }
  const capped = makeAbsoluteZero({ formatPenalty: 0.1 });
  await capped.reset({ seed: 1 });
  for (const length of [10_000, 5_000_000]) {
    await capped.reset({ seed: 1 });
    const huge = await capped.step({ text: propose('function f(x) { return x.length; }', 'x'.repeat(length)) });
    assert.deepEqual([huge.done, huge.reward, huge.info.invalidAction], [false, -0.1, true]);
    assert.match(
      huge.observation.text,
      /input longer than 1000 characters as JSON|action of \d+ characters is over the limit/,
    );
  }
  assert.match(
    (await capped.step({ text: propose('function f(x) { return 1; }', 'x'.repeat(10_000)) })).observation.text,
    /invalid: input longer than 1000 characters as JSON/,
  );
  await capped.reset({ seed: 1 });
  const bigOutput = await capped.step({ text: propose("function f(x) { return 'y'.repeat(x); }", 5000) });
  assert.deepEqual([bigOutput.done, bigOutput.reward, bigOutput.info.rejected], [true, 0, true]);
  assert.match(bigOutput.observation.text, /output longer than 1000 characters as JSON/);
});
