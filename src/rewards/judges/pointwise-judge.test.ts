/**
 * pointwiseJudge end to end against agentrl's own OpenAI-compatible server (serve-policy's HTTP
 * path, a ScriptedPolicy as the judge model): what the judge is shown, the score it returns, the
 * cache, the usage counts, and a judge failure inside `rubric([...])` coming out as `ok: false`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Message } from '../../core/types.ts';
import { InvalidArgumentError } from '../../core/errors.ts';
import { reward } from '../reward.ts';
import { rubric } from '../rubric.ts';
import type { EpisodeContext } from '../episode-context.ts';
import { episode, serveScriptedJudgeDuringSuite } from './judge-servers-fixture.ts';
import { pointwiseJudge } from './pointwise-judge.ts';
import { takeJudgeMetrics } from './judge-usage.ts';

/** The scripted judge model: 1 when an agent message says 42, else 0.25; prose (not JSON) when the rubric asks for GARBLE. */
function scriptedJudgeReply(messages: Message[]): string {
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  if (system.includes('GARBLE')) return 'This episode looks fine to me, maybe 0.8.';
  const solved = /"role":"agent","content":"[^"]*42/.test(user);
  return JSON.stringify({ score: solved ? 1 : 0.25, reason: solved ? 'answered 42' : 'no answer' });
}

const solved = episode('What is six times seven?', [
  ['let me think', 'go on'],
  ['<answer>42</answer>', 'correct'],
]);
const unsolved = episode('What is six times seven?', [['<answer>41</answer>', 'wrong']]);

describe('pointwiseJudge over serve-policy (scripted judge model, real HTTP)', () => {
  const served = serveScriptedJudgeDuringSuite(scriptedJudgeReply);
  const judge = (name: string, rubricText = 'Score 1 when the final answer is correct, 0 otherwise.') =>
    pointwiseJudge({ name, endpoint: { baseURL: served.baseURL, model: 'judge' }, rubric: rubricText });

  test('the judge reads the rubric, the task and the turns, and its score is the reward', async () => {
    const correct = judge('correct');
    assert.equal(correct.name, 'correct');
    assert.equal(correct.kind, 'judge');
    assert.equal(await correct(solved), 1);
    assert.equal(await correct(unsolved), 0.25);
    const [system, user] = served.chats.at(-2) ?? [];
    assert.equal(system?.role, 'system');
    assert.match(system?.content ?? '', /Score 1 when the final answer is correct/);
    assert.match(system?.content ?? '', /\{"score": <a number from 0 to 1>/);
    assert.match(user?.content ?? '', /Task:\nWhat is six times seven\?/);
    assert.match(user?.content ?? '', /"role":"agent","content":"<answer>42<\/answer>"/);
    assert.match(user?.content ?? '', /"role":"environment","content":"correct"/);
    const usage = correct.usage();
    assert.equal(usage.calls, 2);
    assert.equal(usage.cachedCalls, 0);
    assert.equal(usage.failures, 0);
    assert.ok(usage.promptTokens > 200, `prompt tokens ${usage.promptTokens} (byte tokenizer: one per byte)`);
    assert.ok(usage.completionTokens > 10);
  });

  test('the same episode again is answered from the cache: no request, counted as cached', async () => {
    const correct = judge('cached');
    const before = served.chats.length;
    assert.equal(await correct(solved), 1);
    assert.equal(await correct(solved), 1);
    assert.equal(
      await correct(
        episode(
          solved.prompt,
          solved.trajectory.turns.map((t) => [t.action, t.observation]),
        ),
      ),
      1,
    );
    assert.equal(served.chats.length, before + 1);
    const metrics = takeJudgeMetrics([correct]);
    assert.equal(metrics['judge/cached/calls'], 1);
    assert.equal(metrics['judge/cached/cached_calls'], 2);
    assert.ok((metrics['judge/cached/tokens'] ?? 0) > 200);
    assert.deepEqual(correct.usage(), { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, failures: 0 });
  });

  test('a reference answer reaches the judge only when given', async () => {
    const withReference = pointwiseJudge({
      name: 'referenced',
      endpoint: { baseURL: served.baseURL, model: 'judge' },
      rubric: 'Compare with the reference.',
      reference: (context: EpisodeContext) => String(context.privileged?.answer),
    });
    await withReference({ ...unsolved, privileged: { answer: '42' } });
    assert.match(served.chats.at(-1)?.at(-1)?.content ?? '', /Reference answer \(the agent did not see it\):\n42/);
  });

  test('inside rubric([...]): a reply that is not the JSON format is a named failure (ok: false), never 0', async () => {
    const garbled = judge('style', 'GARBLE: answer in prose.');
    const length = reward<EpisodeContext>('turns', (c) => c.trajectory.turns.length, { kind: 'shaping' });
    const scored = await rubric([length, garbled, judge('correct')], [0.1, 1, 1]).score(solved);
    assert.equal(scored.ok, false);
    assert.ok(!scored.ok);
    assert.deepEqual(scored.components, { turns: 2, correct: 1 });
    assert.deepEqual(Object.keys(scored.failures), ['style']);
    assert.match(scored.failures.style ?? '', /^JudgeError: judge style: the reply is not one JSON object/);
    assert.equal(garbled.usage().failures, 1);
    assert.equal(garbled.usage().calls, 1);
  });
});

describe('pointwiseJudge settings', () => {
  const endpoint = { baseURL: 'http://127.0.0.1:1/v1', model: 'judge' };
  test('bad settings are refused at construction, naming the field', () => {
    assert.throws(() => pointwiseJudge({ name: 'Bad Name', endpoint, rubric: 'r' }), InvalidArgumentError);
    assert.throws(
      () => pointwiseJudge({ name: 'ok', endpoint: { ...endpoint, baseURL: 'ftp://x' }, rubric: 'r' }),
      /baseURL/,
    );
    assert.throws(() => pointwiseJudge({ name: 'ok', endpoint, rubric: '' }), /rubric/);
    assert.throws(() => pointwiseJudge({ name: 'ok', endpoint, rubric: 'r', maxAttempts: 0 }), /maxAttempts/);
    assert.throws(() => pointwiseJudge({ name: 'ok', endpoint, rubric: 'r', temprature: 0 } as never), /temprature/);
  });
  test('defaults: temperature 0, a 500 000-token budget per iteration, 4 attempts', () => {
    const judge = pointwiseJudge({ name: 'defaults', endpoint, rubric: 'r' });
    assert.equal(judge.settings.temperature, 0);
    assert.equal(judge.settings.maxTokensPerIteration, 500_000);
    assert.equal(judge.settings.maxAttempts, 4);
  });
});
