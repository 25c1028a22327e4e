import assert from 'node:assert/strict';
import { test } from 'node:test';
import { envReward, rubric } from '../rewards/index.ts';
import { pointwiseJudge } from '../rewards/judges/index.ts';
import { serveScriptedJudgeDuringSuite } from '../rewards/judges/judge-servers-fixture.ts';
import { makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { runRl } from './rl.ts';

const judgeServer = serveScriptedJudgeDuringSuite(() => '{"score": 0.5, "reason": "fine"}');

test("runRl with a judge in its rubric: judge/<name>/* per iteration, read and reset each iteration (the judge's budget refills)", async () => {
  const { policy, referencePolicy } = await warmStartedBandit({ sftSteps: 10, demonstrations: 16 });
  const quality = pointwiseJudge({
    name: 'quality',
    endpoint: { baseURL: judgeServer.baseURL, model: 'judge' },
    rubric: 'Score 1 when the reply picks an arm.',
  });
  const config = {
    iterations: 2,
    tasksPerIteration: 2,
    groupSize: 2,
    maxTurns: 1,
    maxNewTokens: 8,
    validateEvery: 0,
    validationEpisodes: 2,
  };
  const { history } = await runRl({
    policy,
    reference: referencePolicy,
    env: makeBanditEnv,
    config,
    rubric: rubric([envReward, quality], { envReward: 1, quality: 0.1 }),
  });
  assert.equal(history.length, 2);
  for (const metrics of history) {
    const scalars = metrics.scalars ?? {};
    const calls = scalars['judge/quality/calls'] ?? 0;
    const cached = scalars['judge/quality/cached_calls'] ?? 0;
    // One judgement per episode of this iteration alone (cumulative counts would grow past it).
    assert.equal(calls + cached, config.tasksPerIteration * config.groupSize);
    assert.ok((scalars['judge/quality/tokens'] ?? 0) > 0);
    assert.equal(scalars['judge/quality/failures'], 0);
  }
  assert.equal(quality.usage().calls, 0, 'the last iteration read and reset the judge');
});
