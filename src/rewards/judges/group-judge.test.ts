/**
 * groupJudge (RULER-style relative scoring) end to end against agentrl's own OpenAI-compatible
 * server with a scripted judge model that reads the episodes it is shown and scores them; then the
 * presentation (seeded shuffle, labels by position, duplicates sent once) and the strict reply
 * (a missing, unknown or repeated id fails the whole group) over a raw node:http server.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Message } from '../../core/types.ts';
import type { EpisodeContext } from '../episode-context.ts';
import { rubric } from '../rubric.ts';
import { defaultGroupRubric, groupJudge, presentGroup } from './group-judge.ts';
import { answer, completionBody, episode, serveRaw, serveScriptedJudgeDuringSuite } from './judge-servers-fixture.ts';
import { takeJudgeMetrics } from './judge-usage.ts';

/** The scripted judge: each `<episode id>` shown scores 1 when its agent said 42, 0.5 for "partial", else 0. */
function scriptedGroupReply(messages: Message[]): string {
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  const scores = [...user.matchAll(/<episode id="(\d+)">\n([\s\S]*?)\n<\/episode>/g)].map(([, id, body]) => ({
    id,
    reason: 'scripted',
    score: /"agent","content":"[^"]*42/.test(body ?? '') ? 1 : (body ?? '').includes('partial') ? 0.5 : 0,
  }));
  return JSON.stringify({ scores });
}

const task = 'What is six times seven?';
const wrong = episode(task, [['<answer>41</answer>', 'wrong']]);
const right = episode(task, [['<answer>42</answer>', 'correct']]);
const partial = episode(task, [['partial: 6*7 is 6*5 + 6*2', 'go on']]);

describe('groupJudge over serve-policy (scripted judge model, real HTTP)', () => {
  const served = serveScriptedJudgeDuringSuite(scriptedGroupReply);
  const ruler = () => groupJudge({ name: 'ruler', endpoint: { baseURL: served.baseURL, model: 'judge' } });

  test('one request for the group; one score per episode in the group order; identical episodes sent once', async () => {
    const judge = ruler();
    assert.equal(judge.kind, 'judge');
    assert.equal(judge.scope, 'group');
    const sameAsWrong = episode(task, [['<answer>41</answer>', 'wrong']], 9);
    assert.deepEqual(await judge.scoreGroup([wrong, right, sameAsWrong, partial]), [0, 1, 0, 0.5]);
    assert.equal(served.chats.length, 1);
    const [system, user] = served.chats[0] ?? [];
    assert.ok(system?.content.includes(defaultGroupRubric));
    assert.equal(user?.content.match(/<episode id=/g)?.length, 3);
    assert.equal(user?.content.match(/What is six times seven\?/g)?.length, 1, 'the shared task is sent once');
    assert.equal(judge.usage().calls, 1);
    assert.deepEqual(await judge.scoreGroup([partial, right, wrong]), [0.5, 1, 0]);
    assert.equal(judge.usage().cachedCalls, 1, 'the same episodes in another order: the same question, cached');
    assert.equal(served.chats.length, 1);
  });

  test('inside rubric([...]).scoreGroup, each episode gets its relative score; takeJudgeMetrics(rubric) reads the cost', async () => {
    const scoring = rubric([ruler()]);
    const scores = await scoring.scoreGroup([right, wrong]);
    assert.deepEqual(
      scores.map((s) => (s.ok ? s.total : Number.NaN)),
      [1, 0],
    );
    const metrics = takeJudgeMetrics(scoring);
    assert.equal(metrics['judge/ruler/calls'], 1);
    assert.ok((metrics['judge/ruler/tokens'] ?? 0) > 500);
    assert.equal(takeJudgeMetrics(scoring)['judge/ruler/calls'], 0, 'taken: a new iteration');
  });
});

describe('groupJudge presentation: seeded shuffle, labels by position', () => {
  const limits = { seed: 0, maxCharsPerMessage: 2000, maxCharsPerEpisode: 12_000 };
  const group = (n: number): EpisodeContext[] =>
    Array.from({ length: 6 }, (_, i) => episode(`task ${n}`, [[`reply ${i}`, 'ok']]));

  test('the same group is always presented the same way, whatever its index order', () => {
    const contexts = group(1);
    const first = presentGroup(contexts, limits);
    assert.deepEqual(presentGroup(contexts, limits), first);
    const reversed = presentGroup([...contexts].reverse(), limits);
    assert.deepEqual(
      reversed.map((e) => e.transcript),
      first.map((e) => e.transcript),
    );
    assert.deepEqual(
      first.map((e) => e.id),
      ['1', '2', '3', '4', '5', '6'],
    );
  });

  test('position does not follow the rollout index: over 20 groups, index 0 is shown first in few', () => {
    let firstShownFirst = 0;
    let identity = 0;
    for (let n = 0; n < 20; n++) {
      const order = presentGroup(group(n), limits).map((e) => e.indices[0]);
      if (order[0] === 0) firstShownFirst += 1;
      if (order.every((index, position) => index === position)) identity += 1;
    }
    assert.ok(firstShownFirst <= 10, `index 0 shown first in ${firstShownFirst} of 20 groups`);
    assert.equal(identity, 0);
    const reseeded = presentGroup(group(1), { ...limits, seed: 1 }).map((e) => e.indices[0]);
    assert.notDeepEqual(
      reseeded,
      presentGroup(group(1), limits).map((e) => e.indices[0]),
    );
  });
});

describe('groupJudge replies that fail the whole group', () => {
  const replies: Record<string, string> = {
    'missing-score': '{"scores": [{"id": "1", "score": 1}, {"id": "2", "score": 0}]}',
    'unknown-id':
      '{"scores": [{"id": "1", "score": 1}, {"id": "2", "score": 0}, {"id": "3", "score": 0}, {"id": "7", "score": 1}]}',
    'malformed-reply':
      '{"scores": [{"id": "1", "score": 1}, {"id": "1", "score": 0}, {"id": "2", "score": 0}, {"id": "3", "score": 0}]}',
    'out-of-range': '{"scores": [{"id": "1", "score": 1}, {"id": "2", "score": 2}, {"id": "3", "score": 0}]}',
  };
  for (const [reason, content] of Object.entries(replies)) {
    test(`${reason}: every episode of the group is a named failure, none scored`, async () => {
      const server = await serveRaw((_request, response) => answer(response, 200, completionBody(content)));
      after(() => server.close());
      const judge = groupJudge({ name: 'ruler', endpoint: { baseURL: server.baseURL, model: 'judge' } });
      const scores = await rubric([judge]).scoreGroup([wrong, right, partial]);
      for (const score of scores) {
        assert.equal(score.ok, false);
        assert.ok(!score.ok);
        assert.deepEqual(score.components, {});
        assert.match(score.failures.ruler ?? '', /^JudgeError: judge ruler: /);
      }
      assert.equal(judge.usage().failures, 1);
    });
  }

  test('ids given as numbers are read as their labels', async () => {
    const content = '{"scores": [{"id": 1, "score": 0.5}, {"id": 2, "score": 0.5}]}';
    const server = await serveRaw((_request, response) => answer(response, 200, completionBody(content)));
    after(() => server.close());
    const judge = groupJudge({ name: 'ruler', endpoint: { baseURL: server.baseURL, model: 'judge' } });
    assert.deepEqual(await judge.scoreGroup([wrong, right]), [0.5, 0.5]);
  });
});
