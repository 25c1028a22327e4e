import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../../core/errors.ts';
import { codeTaskSchema } from './code-task-schema.ts';
import { makeCode } from './env.ts';
import { codeTasks, type CodeTask } from './tasks.ts';

const loopingTask: CodeTask = {
  id: 'loop',
  signature: 'f(x)',
  spec: 'returns x.',
  tests: Array.from({ length: 50 }, (_, index) => [[index], index] as [unknown[], unknown]),
  solution: 'function f(x) { return x; }',
};

test('code tasks from outside are checked: every shipped task fits, 20,000 tests or a bad signature are refused', async () => {
  const schema = codeTaskSchema({ maxTests: 100 });
  for (const task of codeTasks) assert.equal(schema.safeParse(task).success, true, task.id);
  const env = makeCode();
  const huge = { ...loopingTask, tests: Array.from({ length: 20_000 }, () => [[1], 1] as [unknown[], unknown]) };
  await assert.rejects(
    env.reset({ seed: 0, task: huge }),
    (error) => error instanceof InvalidArgumentError && /tests.*100/s.test(error.message),
  );
  await assert.rejects(
    env.reset({ seed: 0, task: { ...loopingTask, signature: 'process.exit()' } }),
    InvalidArgumentError,
  );
  await assert.rejects(env.reset({ seed: 0, task: { ...loopingTask, spec: 'x'.repeat(5000) } }), InvalidArgumentError);
  const observation = await env.reset({ seed: 0, task: loopingTask });
  assert.match(observation.text, /Write a JavaScript function f\(x\)/);
});

test('code scoring is capped in wall time whatever the test count, and close() kills a scoring run in flight', async () => {
  const env = makeCode({ callTimeoutMs: 10_000, maxWallMs: 1500 });
  await env.reset({ seed: 0, task: loopingTask });
  let started = performance.now();
  const capped = await env.step({ text: '<answer>function f(x) { while (true) {} }</answer>' });
  assert.ok(performance.now() - started < 4000, '50 tests × 10 s would be 500 s; the run stops at maxWallMs');
  assert.deepEqual([capped.done, capped.reward], [true, 0]);
  assert.match(capped.observation.text, /timeout/);
  const open = makeCode({ callTimeoutMs: 10_000, maxWallMs: 60_000 });
  await open.reset({ seed: 0, task: loopingTask });
  started = performance.now();
  const step = open.step({ text: '<answer>function f(x) { while (true) {} }</answer>' });
  setTimeout(() => void open.close(), 300);
  const killed = await step;
  assert.ok(
    performance.now() - started < 3000,
    `ended ${(performance.now() - started).toFixed(0)} ms after it started`,
  );
  assert.match(killed.observation.text, /aborted/);
  await open.reset({ seed: 0, task: loopingTask });
  const after = await open.step({ text: '<answer>function f(x) { return x; }</answer>' });
  assert.equal(after.reward, 1, 'the env plays on after close()');
});
