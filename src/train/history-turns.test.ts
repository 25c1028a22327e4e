import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rlLossConfigSchema } from '../algorithms/index.ts';
import { makeFrozenLake } from '../envs/index.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { historyTurnsSchema, rolloutHistoryTurns } from './history-turns.ts';
import { effectivePreset, rlConfigSchema, validate } from './rl.ts';

test("historyTurns: a count or 'all'; a saved -1 and a flag's text read the same; the rollout gets the count or nothing", () => {
  assert.deepEqual(
    [0, 3, 'all', -1, '-1', '2', 'all'].map((value) => historyTurnsSchema.parse(value)),
    [0, 3, 'all', 'all', 'all', 2, 'all'],
  );
  for (const bad of [-2, 1.5, 'whole', '', ' 2', null]) {
    const result = historyTurnsSchema.safeParse(bad);
    assert.equal(result.success, false, `${JSON.stringify(bad)} is refused`);
    assert.match(
      result.error?.issues.map((issue) => issue.message).join('; ') ?? '',
      /count of previous turns .* or 'all'/,
    );
  }
  assert.deepEqual([rolloutHistoryTurns('all'), rolloutHistoryTurns(0), rolloutHistoryTurns(2)], [undefined, 0, 2]);
});

test("the trainer's config reaches the rollout as one meaning: a count bounds what validate's policy sees; 'all' (or a saved -1) shows the whole conversation and sizes Dr. GRPO's constant by episode", async () => {
  const seen = async (historyTurns: unknown): Promise<number[]> => {
    const counts: number[] = [];
    const policy = new ScriptedPolicy({
      reply: ({ messages }) => {
        counts.push(messages.length);
        return 'thinking';
      },
    });
    const config = rlConfigSchema.parse({ historyTurns, maxTurns: 3, validationEpisodes: 1, systemPrompt: true });
    await validate(policy, () => makeFrozenLake({}), config);
    return counts;
  };
  // system + user, then each earlier turn adds the reply and the next observation.
  assert.deepEqual(await seen(-1), [2, 4, 6]);
  assert.deepEqual(await seen(0), [2, 2, 2]);
  assert.deepEqual(await seen(1), [2, 4, 4]);
  const scale = (historyTurns: unknown) =>
    rlLossConfigSchema.parse(
      effectivePreset(rlConfigSchema.parse({ algo: 'dr-grpo', maxTurns: 3, maxNewTokens: 24, historyTurns })).loss,
    ).lossScaleFactor;
  assert.deepEqual([scale(-1), scale(undefined), scale(0), scale(2)], [72, 72, 24, 24]);
});
