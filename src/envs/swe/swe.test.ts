import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatToolCall } from '../action-format.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { splitSeeds } from '../split.ts';
import { applyEdit, evaluateSubmission, makeSwe } from './env.ts';
import { sweExpert } from './expert.ts';
import { sweInstances } from './instances.ts';

envContract('swe', () => makeSwe({ formatPenalty: 0.1 }), {
  makeExpert: sweExpert,
  seeds: splitSeeds('test', 2),
  maxObservationBytes: 1600,
  invalidActions: [
    '<tool_call>{"name": "read_file", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "shell", "arguments": {"cmd": "ls"}}</tool_call>',
  ],
  invalidActionReward: -0.1,
});

test('each of the 12 instances: the base fails its fail-to-pass tests, the gold patch passes everything', async () => {
  assert.ok(sweInstances.length >= 10);
  await Promise.all(
    sweInstances.map(async (instance) => {
      const before = await evaluateSubmission(instance, instance.files);
      assert.equal(before.failToPass, 0, `${instance.id}: every fail-to-pass test fails on the base`);
      assert.equal(
        before.passToPass,
        instance.passToPass.length,
        `${instance.id}: pass-to-pass tests pass on the base`,
      );
      const patched = { ...instance.files };
      for (const edit of instance.goldPatch) applyEdit(patched, edit.path, edit.find, edit.replace);
      const after = await evaluateSubmission(instance, patched);
      assert.equal(after.resolved, true, `${instance.id}: gold patch resolves`);
    }),
  );
});

test('swe tools: list, read, search, edit (exactly one match), run tests; submitting unfixed scores 0', async () => {
  const env = makeSwe();
  const instance = sweInstances.find((candidate) => candidate.id === 'median-numeric-sort')!;
  await env.reset({ seed: 0, task: instance });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await env.step({ text: formatToolCall({ name, arguments: args }) })).observation.text;
  assert.equal(
    await call('list_files', {}),
    '<tool_response>package.json\nsrc/stats.js\ntest/stats.test.js</tool_response>',
  );
  assert.match(
    await call('read_file', { path: 'src/stats.js' }),
    /^<tool_response>1: function median\(values\) \{\n2: {3}const sorted = \[\.\.\.values\]\.sort\(\);/,
  );
  assert.equal(
    await call('search', { text: 'sort(' }),
    '<tool_response>src/stats.js:2: const sorted = [...values].sort();</tool_response>',
  );
  assert.match(
    await call('edit_file', { path: 'src/stats.js', old: 'sorted', new: 'x' }),
    /old text found 6 times in src\/stats.js/,
  );
  assert.match(await call('read_file', { path: '../../etc/passwd' }), /error: no file \.\.\/\.\.\/etc\/passwd/);
  assert.equal(await call('run_tests', {}), '<tool_response>2 passed, 0 failed</tool_response>');
  const last = await env.step({ text: '<answer>submit</answer>' });
  assert.deepEqual(
    [last.reward, last.info.success, last.observation.text],
    [0, false, 'not resolved: fail-to-pass 0/1, pass-to-pass 2/2'],
  );
});

test('swe expert resolves every instance; random play resolves none', async () => {
  const env = makeSwe();
  const seeds = splitSeeds('test', sweInstances.length);
  let expertWins = 0;
  let randomWins = 0;
  for (const seed of seeds) {
    if ((await playEpisode(env, sweExpert({ seed }), seed)).success) expertWins++;
    if ((await playEpisode(env, sweExpert({ seed, randomActionRate: 1 }), seed)).success) randomWins++;
  }
  assert.equal(expertWins, sweInstances.length);
  assert.equal(randomWins, 0);
});
