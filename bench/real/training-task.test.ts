/**
 * bench:real's task choice on a tiny budget: the tool-required multiplication with the shaped reward
 * and the operand curriculum flows through `runRl` (a tiny random model in a ChatML format with
 * SmolLM2's tool-call family) — every shaping component is an iteration metric, the curriculum's
 * stage is recorded and moves, and training plays the stage while the test env plays the task.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tinyChatmlFormat } from '../../src/chat/tiny-chatml.ts';
import { InvalidArgumentError } from '../../src/core/index.ts';
import { TransformerModel } from '../../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../../src/policy/builtin-policy.ts';
import { type IterationMetrics, runRl } from '../../src/train/rl.ts';
import { makeTrainingTask, readTrainingTask } from './training-task.ts';

test('readTrainingTask: defaults, the allowed values, and a bad value named', () => {
  assert.deepEqual(readTrainingTask({}), {
    task: 'add',
    reward: 'outcome',
    curriculum: 'none',
    advanceAt: 0.5,
    star: 0,
  });
  assert.deepEqual(
    readTrainingTask({
      BENCH_REAL_TASK: 'mul',
      BENCH_REAL_REWARD: 'shaped',
      BENCH_REAL_CURRICULUM: 'operands',
      BENCH_REAL_ADVANCE_AT: '0.25',
    }),
    { task: 'mul', reward: 'shaped', curriculum: 'operands', advanceAt: 0.25, star: 0 },
  );
  assert.equal(readTrainingTask({ BENCH_REAL_TASK: 'mul', BENCH_REAL_STAR: '24' }).star, 24);
  assert.throws(() => readTrainingTask({ BENCH_REAL_STAR: '24' }), /BENCH_REAL_STAR needs BENCH_REAL_TASK=mul/);
  assert.throws(() => readTrainingTask({ BENCH_REAL_TASK: 'mul', BENCH_REAL_STAR: '-1' }), InvalidArgumentError);
  assert.throws(() => readTrainingTask({ BENCH_REAL_REWARD: 'dense' }), InvalidArgumentError);
  assert.throws(() => readTrainingTask({ BENCH_REAL_TASK: 'div' }), /"add"|'add'|add/);
});

test('the shaped reward pays its components on top of solved; the outcome reward leaves them at 0', () => {
  const format = tinyChatmlFormat();
  const shaped = makeTrainingTask(format, readTrainingTask({ BENCH_REAL_TASK: 'mul', BENCH_REAL_REWARD: 'shaped' }));
  assert.deepEqual(shaped.testEnv().rewardComponents.weights, {
    solved: 1,
    call_format: 0.1,
    call_operands: 0.2,
    tool_call: 0.2,
    invalid_action: -0,
  });
  const plain = makeTrainingTask(format, readTrainingTask({ BENCH_REAL_TASK: 'mul' }));
  assert.equal(plain.testEnv().rewardComponents.weights.call_format, 0);
  assert.equal(plain.curriculum, undefined);
});

test('the prompt curriculum fades the few-shot scaffold to the zero-shot question, which the test env plays', async () => {
  const format = tinyChatmlFormat();
  const training = makeTrainingTask(
    format,
    readTrainingTask({ BENCH_REAL_TASK: 'mul', BENCH_REAL_CURRICULUM: 'prompt', BENCH_REAL_ADVANCE_AT: '0' }),
  );
  const calls = async () => ((await training.trainEnv().reset({ seed: 1 })).text.match(/What is/g) ?? []).length;
  assert.equal(await calls(), 3, 'two example questions, then the task');
  training.curriculum?.observe(0);
  training.curriculum?.observe(0);
  assert.equal(await calls(), 2);
  assert.match((await training.testEnv().reset({ seed: 1 })).text, /^What is \d+ \* \d+\?$/);
  assert.throws(
    () => makeTrainingTask(format, readTrainingTask({ BENCH_REAL_CURRICULUM: 'prompt' })),
    /needs BENCH_REAL_TASK=mul/,
  );
});

test('runRl on a tiny budget: shaped components as reward/<name> metrics, the curriculum stage recorded and advancing', async () => {
  const format = tinyChatmlFormat();
  const model = await TransformerModel.create(
    { vocabSize: 264, hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 32, maxSeqLen: 2048 },
    { seed: 3 },
  );
  const policy = new BuiltinPolicy({ model, chatFormat: format });
  // advanceAt 0: a stage every two iterations whatever the success (a random model solves nothing).
  const training = makeTrainingTask(
    format,
    readTrainingTask({
      BENCH_REAL_TASK: 'mul',
      BENCH_REAL_REWARD: 'shaped',
      BENCH_REAL_CURRICULUM: 'operands',
      BENCH_REAL_ADVANCE_AT: '0',
    }),
  );
  const curriculum = training.curriculum;
  assert.ok(curriculum !== undefined);
  const history: IterationMetrics[] = [];
  const questions: string[][] = [];
  await runRl({
    policy,
    env: training.trainEnv,
    config: {
      algo: 'grpo',
      iterations: 3,
      tasksPerIteration: 2,
      groupSize: 2,
      maxTurns: 3,
      maxNewTokens: 8,
      validateEvery: 0,
      validationEpisodes: 2,
      klCoef: 0,
      seed: 0,
    },
    onTrajectories: (trajectories) => {
      // The task's question is the last "What is A * B?" of the prompt (the one-shot example's comes first).
      questions.push(
        trajectories.map(
          (t) => [...format.tokenizer.decode(t.tokens).matchAll(/What is (\d+) \* (\d+)\?/g)].at(-1)?.[0] ?? '',
        ),
      );
    },
    onIteration: (m) => {
      m.scalars = { ...m.scalars, ...curriculum.metrics() };
      curriculum.observe(m.success);
      history.push(m);
    },
  });
  assert.equal(history.length, 3);
  for (const m of history) {
    for (const name of ['solved', 'call_format', 'call_operands', 'tool_call', 'invalid_action'])
      assert.ok(Number.isFinite(m.scalars?.[`reward/${name}`]), `reward/${name} at iteration ${m.iteration}`);
  }
  assert.deepEqual(
    history.map((m) => m.scalars?.['curriculum/stage']),
    [0, 0, 1],
  );
  const operands = (question: string) => (question.match(/\d+/g) ?? []).map(Number);
  for (const question of questions.flat()) assert.match(question, /What is \d+ \* \d+\?/);
  for (const [iteration, smallest] of [
    [0, [2, 9]],
    [2, [10, 19]],
  ] as const) {
    for (const question of questions[iteration] ?? []) {
      const small = Math.min(...operands(question));
      assert.ok(small >= smallest[0] && small <= smallest[1], `iteration ${iteration + 1}: ${question}`);
    }
  }
  assert.equal(curriculum.stage, 1);
  // The test env plays the task itself, not the stage.
  const first = await training.testEnv().reset({ seed: 1 });
  assert.match(first.text, /What is \d{2} \* \d{2}\?$/);
});

test('BENCH_REAL_STAR: the zero-shot question is the task, the callshot scaffold the hint, on the same operands', async () => {
  const format = tinyChatmlFormat();
  const training = makeTrainingTask(format, readTrainingTask({ BENCH_REAL_TASK: 'mul', BENCH_REAL_STAR: '8' }));
  assert.ok(training.hintEnv !== undefined);
  assert.match(training.name, /mul2x2\/plain\/what\), STaR round on 8 tasks \(hint: callshot\)/);
  const [task, hinted] = [await training.testEnv().reset({ seed: 7 }), await training.hintEnv().reset({ seed: 7 })];
  assert.deepEqual(hinted.data, task.data);
  assert.ok(hinted.text.endsWith(task.text) && hinted.text.length > task.text.length, hinted.text);
  assert.equal(makeTrainingTask(format, readTrainingTask({ BENCH_REAL_TASK: 'mul' })).hintEnv, undefined);
});
