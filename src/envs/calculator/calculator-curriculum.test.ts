import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/index.ts';
import { splitSeeds } from '../split.ts';
import { makeCalculator, type CalculatorOptions } from './env.ts';
import { CalculatorCurriculum } from './calculator-curriculum.ts';

const task: CalculatorOptions = { numOperands: 2, minOperand: 10, maxOperand: 99, operators: ['*'] };
const operands = (expression: string) => expression.split(' * ').map(Number);

async function expressions(curriculum: CalculatorCurriculum, seeds: readonly number[]): Promise<string[]> {
  const env = makeCalculator({ ...task, ...curriculum.stageOptions() });
  return Promise.all(seeds.map(async (seed) => (await env.reset({ seed })).text));
}

test('calculator curriculum: stage 0 draws one operand of 2–9, the last stage is the task itself', async () => {
  const curriculum = new CalculatorCurriculum();
  const seeds = splitSeeds('train', 40);
  for (const expression of await expressions(curriculum, seeds)) {
    const [a = 0, b = 0] = operands(expression);
    assert.ok(Math.min(a, b) >= 2 && Math.min(a, b) <= 9 && Math.max(a, b) >= 10 && Math.max(a, b) <= 99, expression);
  }
  const small = new Set((await expressions(curriculum, seeds)).map((e) => (operands(e)[0]! < 10 ? 'left' : 'right')));
  assert.deepEqual([...small].sort(), ['left', 'right'], 'the small operand takes either side');
  const last = new CalculatorCurriculum({}, { stage: 3, recent: [] });
  const plain = makeCalculator(task);
  for (const [i, expression] of (await expressions(last, seeds)).entries())
    assert.equal(expression, (await plain.reset({ seed: seeds[i]! })).text);
});

test('calculator curriculum advances on the mean success of its window, one stage at a time, never back', () => {
  const curriculum = new CalculatorCurriculum({ advanceAt: 0.5, window: 2 });
  assert.deepEqual(curriculum.metrics(), { 'curriculum/stage': 0 });
  assert.equal(curriculum.observe(0.9), false, 'one iteration is not a window');
  assert.equal(curriculum.observe(0.2), true, 'mean 0.55 ≥ 0.5');
  assert.equal(curriculum.stage, 1);
  assert.equal(curriculum.observe(1), false, 'the window restarts on a new stage');
  assert.equal(curriculum.observe(0), true, 'mean 0.5 reaches 0.5');
  assert.equal(curriculum.observe(0.2), false);
  assert.equal(curriculum.observe(0.2), false, 'mean 0.2');
  assert.equal(curriculum.stage, 2);
  for (const success of [1, 1, 1, 1, 1, 1]) curriculum.observe(success);
  assert.equal(curriculum.stage, 3, 'the last stage is kept');
  assert.deepEqual(curriculum.stageOptions(), {});
});

test('advanceAt 0 is a fixed schedule: a new stage every window iterations, whatever the success', () => {
  const curriculum = new CalculatorCurriculum({ advanceAt: 0, window: 2 });
  const stages = [0, 0, 0, 0, 0, 0, 0].map((success) => {
    curriculum.observe(success);
    return curriculum.stage;
  });
  assert.deepEqual(stages, [0, 1, 1, 2, 2, 3, 3]);
});

test('calculator curriculum is seeded and replays: the same successes give the same stages and the same tasks', async () => {
  const successes = [0, 0.1, 0.6, 0.7, 0.2, 0.9, 0.8, 0.1];
  const seeds = splitSeeds('train', 8);
  const run = async () => {
    const curriculum = new CalculatorCurriculum();
    const played: string[][] = [];
    for (const success of successes) {
      played.push(await expressions(curriculum, seeds));
      curriculum.observe(success);
    }
    return { played, state: curriculum.state() };
  };
  const first = await run();
  assert.deepEqual(await run(), first);
  assert.deepEqual(first.state, { stage: 2, recent: [0.8, 0.1] });
  // Resuming from a state continues exactly where the run left off.
  const resumed = new CalculatorCurriculum({}, first.state);
  resumed.observe(0.9);
  assert.equal(resumed.stage, 3);
});

test('a stage may reword the question (a few-shot scaffold that later stages fade)', async () => {
  const curriculum = new CalculatorCurriculum({
    stages: [{ question: 'Example: 2 * 3 → call the tool. Now: {expression}' }, {}],
    advanceAt: 0,
    window: 1,
  });
  const env = () => makeCalculator({ ...task, question: 'What is {expression}?', ...curriculum.stageOptions() });
  assert.match((await env().reset({ seed: 1 })).text, /^Example: 2 \* 3 → call the tool\. Now: \d+ \* \d+$/);
  curriculum.observe(0);
  assert.match((await env().reset({ seed: 1 })).text, /^What is \d+ \* \d+\?$/);
  assert.throws(() => new CalculatorCurriculum({ stages: [{ question: 'no slot' }] }), /must contain \{expression\}/);
});

test('calculator curriculum rejects bad stages, rates and resume states with typed errors', () => {
  assert.throws(() => new CalculatorCurriculum({ stages: [] }), InvalidArgumentError);
  assert.throws(() => new CalculatorCurriculum({ advanceAt: -0.1 }), InvalidArgumentError);
  assert.throws(() => new CalculatorCurriculum({ window: 0 }), InvalidArgumentError);
  assert.throws(() => new CalculatorCurriculum({}, { stage: 4, recent: [] }), /resumed stage 4 is not one of 0…3/);
  assert.throws(() => new CalculatorCurriculum().observe(1.5), /not a rate/);
  assert.throws(() => new CalculatorCurriculum().observe(Number.NaN), /not a rate/);
  assert.throws(() => makeCalculator({ smallOperand: { min: 9, max: 2 } }), /min must not exceed max/);
});
