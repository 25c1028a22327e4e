/**
 * `close()` kills the swe env's sandbox runs in flight (serve-env calls it when a client's socket
 * closes or its HTTP request is aborted): the scoring run of a submitted patch whose module never
 * returns ends 'aborted', not after its time limit, and the env plays the next episode.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatToolCall } from '../action-format.ts';
import { makeSwe } from './env.ts';
import { sweInstances } from './instances.ts';

const instance = sweInstances.find((candidate) => candidate.id === 'median-numeric-sort');

test('swe close(): the scoring run in flight is killed and reported aborted; the env plays on', async () => {
  assert.ok(instance !== undefined);
  const env = makeSwe({ testTimeoutMs: 30_000 });
  await env.reset({ seed: 0, task: instance });
  const loop = {
    path: 'src/stats.js',
    old: 'function median(values) {',
    new: 'for (;;) {}\nfunction median(values) {',
  };
  await env.step({ text: formatToolCall({ name: 'edit_file', arguments: loop }) });
  const started = performance.now();
  const submitted = env.step({ text: '<answer>submit</answer>' });
  setTimeout(() => void env.close(), 100);
  const result = await submitted;
  assert.deepEqual([result.done, result.reward], [true, 0]);
  assert.match(result.observation.text, /aborted/, result.observation.text);
  assert.ok(performance.now() - started < 30_000, 'ended by close(), not by the time limit');
  await env.reset({ seed: 0, task: instance });
  const after = await env.step({ text: formatToolCall({ name: 'list_files', arguments: {} }) });
  assert.match(after.observation.text, /src\/stats\.js/);
});
