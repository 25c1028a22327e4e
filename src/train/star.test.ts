import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Env } from '../core/types.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { rollout } from '../rollout/index.ts';
import { splitSeeds } from '../envs/split.ts';
import { bandit, makeBanditEnv, warmStartedBandit } from './bandit-test-fixture.ts';
import { heldOutLoss } from './sft.ts';
import { starRound, type StarPlaySettings } from './star.ts';

const HINT = 'B! ';

/** The bandit with a hint before its question: the same task (arms, pay probabilities), another first observation. */
function hintedBandit(): Env {
  const env = makeBanditEnv();
  return {
    name: env.name,
    reset: async (options) => {
      const observation = await env.reset(options);
      return { ...observation, text: `${HINT}${observation.text}` };
    },
    step: (action) => env.step(action),
  };
}

const play: StarPlaySettings = {
  maxTurns: 1,
  maxNewTokens: 24,
  temperature: 1,
  systemPrompt: false,
  stopAtTag: false,
  seed: 3,
};
const seeds = splitSeeds('train', 16);

test('STaR round: successes kept as played, hinted successes moved onto the task’s own prompt, fine-tuning raises their likelihood', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const start = await BuiltinPolicy.fromState(await policy.saveState());
  const { trajectories } = await rollout({
    policy,
    env: makeBanditEnv,
    seeds: seeds.slice(0, 1),
    temperature: 0,
    maxTurns: 1,
    maxNewTokens: 24,
    instructions: false,
  });
  const first = trajectories[0]!;
  const taskPrompt = first.tokens.slice(0, first.lossMask.indexOf(1));
  const hintTokens = policy.tokenizer.encode(HINT);

  const round = await starRound({
    policy,
    env: makeBanditEnv,
    hintEnv: hintedBandit,
    seeds,
    samples: 2,
    play,
    sft: { steps: 6, batchSize: 4, learningRate: 1e-2, warmupSteps: 0 },
  });

  assert.equal(round.tasks, 16);
  assert.ok(round.solvedUnaided > 0 && round.solvedUnaided < 16, `solved unaided ${round.solvedUnaided}`);
  assert.ok(round.solvedWithHint > 0, 'some unsolved task was solved with the hint');
  assert.ok(round.solvedUnaided + round.solvedWithHint <= 16);
  // Distinct episodes only: the bandit's prompt is the same for every seed, so its many successes are a few sequences.
  assert.ok(round.examples.length > 0);
  assert.equal(new Set(round.examples.map((example) => example.tokens.join(','))).size, round.examples.length);
  for (const example of round.examples) {
    // Every kept episode starts with the task's own prompt (the bandit's is the same for every seed), no hint.
    assert.deepEqual(example.tokens.slice(0, taskPrompt.length), taskPrompt);
    assert.deepEqual(
      example.mask.slice(0, taskPrompt.length),
      taskPrompt.map(() => 0),
    );
    assert.equal(example.tokens.length, example.mask.length);
    assert.ok(example.mask.includes(1));
    assert.ok(!example.tokens.join(',').includes(hintTokens.join(',')), 'the hint is removed');
  }
  // Each kept reply is one the env scores a success: replayed as text on the task, the better arm.
  for (const example of round.examples) {
    const reply = policy.tokenizer.decode(example.tokens.filter((token, i) => example.mask[i] === 1 && token < 256));
    const env = makeBanditEnv();
    await env.reset({ seed: seeds[0]! });
    const step = await env.step({ text: reply });
    assert.equal(step.info.success, true, `kept reply ${JSON.stringify(reply)}`);
  }
  assert.equal(round.sft?.history.at(-1)?.step, 6);
  const before = await heldOutLoss(start, round.examples, 8);
  const after = await heldOutLoss(policy, round.examples, 8);
  assert.ok(after < before, `NLL of the kept replies ${before} → ${after}`);
});

test('STaR round: without a hint env only unaided successes are kept; a hint env of another task is refused', async () => {
  const { policy } = await warmStartedBandit({ sftSteps: 40, demonstrations: 32 });
  const round = await starRound({
    policy,
    env: makeBanditEnv,
    seeds: seeds.slice(0, 8),
    samples: 2,
    play,
    sft: { steps: 2, batchSize: 4 },
  });
  assert.equal(round.solvedWithHint, 0);
  assert.equal(round.seconds.rationalization, 0);
  assert.ok(round.examples.length > 0);

  const otherTask = () => bandit.make({ arms: ['A', 'C'] });
  await assert.rejects(
    starRound({
      policy,
      env: makeBanditEnv,
      hintEnv: otherTask,
      seeds: seeds.slice(0, 8),
      samples: 1,
      play,
      sft: { steps: 1 },
    }),
    /the hint env's task for seed \d+ is not the env's/,
  );
});
