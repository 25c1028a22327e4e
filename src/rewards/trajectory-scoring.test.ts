import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Trajectory, Turn } from '../core/types.ts';
import { actionFormat, builtinRewards, envReward, envSuccess, overlongPenalty } from './builtin-rewards.ts';
import { rewardComponentMetrics } from './component-metrics.ts';
import type { EpisodeContext } from './episode-context.ts';
import { groupReward, reward } from './reward.ts';
import { resolveRewardSpec, rubricFromSpec } from './reward-spec.ts';
import { rubric } from './rubric.ts';
import { scoreEpisodes, withoutFailedGroups } from './trajectory-scoring.ts';

/** Two turns of 3 generated tokens each, after a 2-token prompt and a 1-token observation: [p p a a a o a a a]. */
function twoTurns(
  groupId: string,
  turnRewards: [number, number],
  { invalid = false, success = false } = {},
): Trajectory {
  const turns: Turn[] = [
    { start: 2, end: 5, reward: turnRewards[0], action: 'left', observation: 'o', invalidAction: invalid },
    { start: 6, end: 9, reward: turnRewards[1], action: 'right', observation: '', invalidAction: false },
  ];
  const tokenRewards = [0, 0, 0, 0, turnRewards[0], 0, 0, 0, turnRewards[1]];
  return {
    tokens: [1, 2, 3, 4, 5, 6, 7, 8, 9],
    lossMask: [0, 0, 1, 1, 1, 0, 1, 1, 1],
    logprobs: [0, 0, -1, -1, -1, 0, -1, -1, -1],
    tokenRewards,
    turns,
    totalReward: turnRewards[0] + turnRewards[1],
    success,
    groupId,
    seed: 0,
    truncated: false,
    rewardComponents: { step: -0.1, goal: turnRewards[1] },
  };
}

const context = (trajectory: Trajectory): EpisodeContext => ({ trajectory, prompt: 'p' });

test('scoreEpisodes: without envReward the total sits on the last generated token and replaces the env’s per-turn rewards', async () => {
  const [scored] = await scoreEpisodes(rubric([envSuccess, actionFormat], [1, 0.5]), [
    context(twoTurns('g', [-0.1, 1], { invalid: true, success: true })),
  ]);
  assert.equal(scored?.totalReward, 1.25);
  assert.deepEqual(scored?.tokenRewards, [0, 0, 0, 0, 0, 0, 0, 0, 1.25]);
  assert.deepEqual(
    scored?.turns.map((t) => t.reward),
    [0, 1.25],
  );
  assert.deepEqual(scored?.rewardComponents, { step: -0.1, goal: 1, envSuccess: 1, actionFormat: 0.5 });
  assert.equal(scored?.success, true);
});

test('scoreEpisodes: envReward with weight w keeps the env’s per-turn rewards in place, scaled by w; the rest goes on the last token', async () => {
  const [scored] = await scoreEpisodes(rubric([envReward, envSuccess], { envReward: 2, envSuccess: 0.5 }), [
    context(twoTurns('g', [-0.25, 1], { success: true })),
  ]);
  assert.equal(scored?.totalReward, 2 * 0.75 + 0.5);
  assert.deepEqual(scored?.tokenRewards, [0, 0, 0, 0, -0.5, 0, 0, 0, 2.5]);
  assert.deepEqual(
    scored?.turns.map((t) => t.reward),
    [-0.5, 2.5],
  );
  const sum = (scored?.tokenRewards ?? []).reduce((a, b) => a + b, 0);
  assert.equal(sum, scored?.totalReward);
});

test('scoreEpisodes: group rewards see the whole group; a failing component marks the episode (env reward kept, never 0) and takes its group out', async () => {
  const seen: number[] = [];
  const rank = groupReward<EpisodeContext>('rank', async (group) => {
    seen.push(group.length);
    return group.map((c) => c.trajectory.totalReward);
  });
  const flaky = reward<EpisodeContext>('flaky', (c) => {
    if (c.trajectory.totalReward < 0) throw new TypeError('judge timed out');
    return 1;
  });
  const trajectories = [twoTurns('a', [0, 1]), twoTurns('a', [0, 0]), twoTurns('b', [0, 1]), twoTurns('b', [-1, 0])];
  const scored = await scoreEpisodes(rubric([rank, flaky]), trajectories.map(context));
  assert.deepEqual(seen, [2, 2]);
  assert.deepEqual(
    scored.map((t) => t.totalReward),
    [2, 1, 2, -1],
  );
  assert.equal(scored[3]?.rewardFailures?.flaky, 'TypeError: judge timed out');
  assert.deepEqual(
    scored[3]?.tokenRewards,
    trajectories[3]?.tokenRewards,
    'the failed episode keeps the env’s rewards',
  );
  assert.deepEqual(
    withoutFailedGroups(scored).map((t) => t.groupId),
    ['a', 'a'],
  );
  const metrics = rewardComponentMetrics(scored);
  assert.equal(metrics.rewardFailures, 1);
  assert.equal(metrics['reward/flaky/failures'], 1);
  assert.equal(metrics['reward/flaky'], 1);
  assert.equal(metrics['reward/rank'], 0.25);
  assert.equal(metrics['reward/step'], -0.1);
  assert.deepEqual(rewardComponentMetrics([{ ...twoTurns('c', [0, 0]), rewardComponents: undefined }]), {});
});

test('built-in rewards: actionFormat, envSuccess and DAPO’s soft overlong penalty', async () => {
  const t = twoTurns('g', [0, 1], { invalid: true });
  assert.equal(await actionFormat(context(t)), 0.5);
  assert.equal(await envSuccess(context(t)), 0);
  assert.equal(await actionFormat(context({ ...t, turns: [] })), 0);
  // Replies of 3 tokens: L_max 4, L_cache 2 → (2 − 3) / 2; L_max 2 → −1; L_max 12 → 0.
  assert.equal(await overlongPenalty({ maxTokens: 4, cacheTokens: 2 })(context(t)), -0.5);
  assert.equal(await overlongPenalty({ maxTokens: 2, cacheTokens: 1 })(context(t)), -1);
  assert.equal(await overlongPenalty({ maxTokens: 12 })(context(t)), 0);
  assert.throws(() => overlongPenalty({ maxTokens: 4, cacheTokens: 8 }), InvalidArgumentError);
  assert.deepEqual(Object.keys(builtinRewards({ maxNewTokens: 8 })), [
    'envReward',
    'envSuccess',
    'actionFormat',
    'overlong',
  ]);
});

test('reward spec: name=weight over the built-ins; unknown names list them; a module path loads its default rubric', async () => {
  const builtins = builtinRewards({ maxNewTokens: 8 });
  const parsed = rubricFromSpec('envSuccess=1, actionFormat=0.25,overlong', builtins);
  assert.deepEqual(parsed.weights, { envSuccess: 1, actionFormat: 0.25, overlong: 1 });
  assert.deepEqual(parsed.kinds, { envSuccess: 'outcome', actionFormat: 'format', overlong: 'penalty' });
  assert.throws(
    () => rubricFromSpec('sucess=1', builtins),
    /unknown reward "sucess"; the built-in rewards are envReward, envSuccess/,
  );
  assert.throws(() => rubricFromSpec('toString=1', builtins), /unknown reward "toString"/);
  assert.throws(() => rubricFromSpec('envSuccess=x', builtins), /not a finite number/);
  assert.throws(() => rubricFromSpec('envSuccess=', builtins), /not a finite number/);
  assert.throws(() => rubricFromSpec('envSuccess,envSuccess=2', builtins), /given twice/);
  assert.throws(() => rubricFromSpec(' , ', builtins), /empty/);
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-reward-spec-'));
  try {
    const rubricFile = join(dir, 'my-rubric.ts');
    const rewardsModule = new URL('./index.ts', import.meta.url).href;
    await writeFile(
      rubricFile,
      `import { rubric, reward, envSuccess } from '${rewardsModule}';\n` +
        `const short = reward('short', (c) => (c.trajectory.turns.length <= 1 ? 1 : 0), { kind: 'shaping' });\n` +
        'export default rubric([envSuccess, short], [1, 0.5]);\n',
    );
    const loaded = await resolveRewardSpec('my-rubric.ts', builtins, dir);
    assert.deepEqual(loaded.names, ['envSuccess', 'short']);
    await writeFile(join(dir, 'not-a-rubric.mjs'), 'export default 42;\n');
    await assert.rejects(resolveRewardSpec('./not-a-rubric.mjs', builtins, dir), /default export is not a rubric/);
    await assert.rejects(resolveRewardSpec('./missing.ts', builtins, dir), /cannot load the module/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
