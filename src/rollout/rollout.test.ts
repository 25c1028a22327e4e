import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Env, Message, Trajectory } from '../core/types.ts';
import { banditExpert, frozenLakeExpert, makeBandit, makeFrozenLake, splitSeeds } from '../envs/index.ts';
import { renderChat, renderGenerationPrompt } from '../chat/chat-template.ts';
import { byteSpecialTokens, byteTokenizer } from '../chat/tokenizer.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import type { GenerateRequest, Generation, Policy } from '../policy/types.ts';
import { PromptTooLongError } from './errors.ts';
import { rollout } from './rollout.ts';
import { at } from '../core/indexing.ts';

const lakeReplies = [
  '<answer>Right</answer>',
  'not an action',
  '<think>t</think><answer>Down</answer>',
  '<answer>Up</answer>',
];
/** Deterministic per episode: the reply depends on the turn number only. */
const lakePolicy = (): ScriptedPolicy =>
  new ScriptedPolicy({
    reply: ({ messages }) => at(lakeReplies, Math.floor(messages.length / 2) % lakeReplies.length),
    logprob: -0.5,
  });
const makeLake = (): Env => makeFrozenLake({ formatPenalty: 0.1 });

/** The conversation a trajectory stands for, re-rendered from its turns' texts. */
async function reRender(env: Env, trajectory: Trajectory): Promise<ReturnType<typeof renderChat>> {
  const first = await env.reset({ seed: trajectory.seed });
  const messages: Message[] = [
    { role: 'system', content: env.instructions! },
    { role: 'user', content: first.text },
  ];
  trajectory.turns.forEach((turn, i) => {
    if (i > 0) messages.push({ role: 'user', content: at(trajectory.turns, i - 1).observation });
    messages.push({ role: 'assistant', content: turn.action });
  });
  return renderChat(messages);
}

test('rollout (scripted × frozen-lake): ids re-render the conversation, mask on assistant tokens, rewards on turn ends', async () => {
  const seeds = splitSeeds('train', 6);
  const { trajectories, stats } = await rollout({
    policy: lakePolicy(),
    env: makeLake,
    seeds,
    groupSize: 2,
    maxTurns: 6,
    concurrency: 5,
  });
  assert.equal(trajectories.length, 12);
  let multiTurn = 0;
  for (const [i, trajectory] of trajectories.entries()) {
    assert.equal(trajectory.seed, seeds[Math.floor(i / 2)]);
    const rendered = await reRender(makeLake(), trajectory);
    assert.deepEqual(trajectory.tokens, rendered.tokens, 'ids equal the re-rendered conversation');
    assert.deepEqual(
      trajectory.lossMask,
      rendered.assistantMask,
      'lossMask is 1 exactly on assistant-generated tokens',
    );
    for (const array of [trajectory.lossMask, trajectory.logprobs, trajectory.tokenRewards])
      assert.equal(array.length, trajectory.tokens.length);
    trajectory.logprobs.forEach((logprob, t) => {
      assert.equal(logprob, trajectory.lossMask[t] === 1 ? -0.5 : 0);
    });

    const expectedRewards = trajectory.tokens.map(() => 0);
    for (const turn of trajectory.turns) {
      for (let t = turn.start; t < turn.end; t++) assert.equal(trajectory.lossMask[t], 1);
      assert.equal(trajectory.tokens[turn.end - 1], byteSpecialTokens.end, 'the generated <|end|> closes the turn');
      assert.equal(byteTokenizer.decode(trajectory.tokens.slice(turn.start, turn.end - 1)), turn.action);
      assert.equal(turn.invalidAction, turn.action === 'not an action');
      expectedRewards[turn.end - 1] = turn.reward;
    }
    assert.deepEqual(trajectory.tokenRewards, expectedRewards, 'each reward sits on its turn’s last generated token');
    assert.equal(
      trajectory.totalReward,
      trajectory.turns.reduce((sum, turn) => sum + turn.reward, 0),
    );
    assert.ok(trajectory.turns.length <= 6);
    if (trajectory.success) assert.equal(trajectory.truncated, false);
    if (trajectory.truncated) assert.equal(trajectory.turns.length, 6, 'only maxTurns truncates here');
    if (trajectory.turns.length > 1) multiTurn++;
  }
  assert.ok(multiTurn >= 6, `${multiTurn} multi-turn episodes`);
  assert.ok(
    trajectories.some((t) => t.turns.some((turn) => turn.reward < 0)),
    'an invalid turn was penalised',
  );
  assert.ok(trajectories.some((t) => t.truncated) && trajectories.some((t) => !t.truncated), 'both endings occur');

  assert.equal(stats.episodes, 12);
  const turns = trajectories.reduce((sum, t) => sum + t.turns.length, 0);
  assert.equal(stats.meanTurns, turns / 12);
  assert.equal(stats.meanReward, trajectories.reduce((sum, t) => sum + t.totalReward, 0) / 12);
  assert.equal(stats.successRate, trajectories.filter((t) => t.success).length / 12);
  assert.equal(
    stats.generatedTokens,
    trajectories.reduce((sum, t) => sum + t.lossMask.filter((m) => m === 1).length, 0),
  );
  assert.equal(
    stats.invalidActionRate,
    trajectories.reduce((sum, t) => sum + t.turns.filter((turn) => turn.invalidAction).length, 0) / turns,
  );
});

test('rollout: groups share groupId; the same seeds replay identical trajectories', async () => {
  const seeds = splitSeeds('train', 3, 10);
  const run = () => rollout({ policy: lakePolicy(), env: makeLake, seeds, groupSize: 3, maxTurns: 4, concurrency: 4 });
  const first = await run();
  const groups = first.trajectories.map((t) => t.groupId);
  assert.deepEqual(
    groups,
    seeds.flatMap((seed) => [0, 1, 2].map(() => `frozen-lake:${seed}`)),
  );
  const again = await run();
  assert.deepEqual(again.trajectories, first.trajectories);
  const { tokensPerSecond: _t1, ...statsA } = first.stats;
  const { tokensPerSecond: _t2, ...statsB } = again.stats;
  assert.deepEqual(statsB, statsA);
  const withTasks = await rollout({
    policy: lakePolicy(),
    env: makeLake,
    seeds: [1, 1],
    tasks: [{ map: ['PG', '__'] }, { map: ['P_', 'G_'] }],
    maxTurns: 2,
  });
  assert.deepEqual(
    withTasks.trajectories.map((t) => t.groupId),
    ['frozen-lake:1:task0', 'frozen-lake:1:task1'],
  );
  // Turn 1 is invalid, turn 2 moves Down: only the second map has G below P.
  assert.deepEqual(
    withTasks.trajectories.map((t) => t.success),
    [false, true],
  );
});

test('rollout: one generateBatch call per turn holds every live episode needing an action, at most `concurrency`', async () => {
  const batches: number[] = [];
  const inner = lakePolicy();
  const spy: Policy = {
    tokenizer: inner.tokenizer,
    contextWindow: inner.contextWindow,
    generate: (request: GenerateRequest) => inner.generate(request),
    generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
      batches.push(requests.length);
      assert.ok(
        requests.every((r) => r.seed === at(requests, 0).seed && r.maxNewTokens === 64 && r.temperature === 0.5),
        'one sampling setting per batch',
      );
      return inner.generateBatch(requests);
    },
  };
  const { trajectories } = await rollout({
    policy: spy,
    env: makeLake,
    seeds: splitSeeds('train', 7),
    maxTurns: 3,
    concurrency: 4,
    temperature: 0.5,
  });
  const turns = trajectories.reduce((sum, t) => sum + t.turns.length, 0);
  assert.equal(
    batches.reduce((a, b) => a + b, 0),
    turns,
    'every turn was generated in some batch',
  );
  assert.equal(batches[0], 4);
  assert.ok(batches.every((size) => size >= 1 && size <= 4));
  assert.ok(batches.length <= Math.ceil(7 / 4) * 3 + 3, `${batches.length} batches for ${turns} turns`);
});

test('rollout: a reply cut by maxNewTokens is closed by an unmasked <|end|>; ids still re-render', async () => {
  const policy = new ScriptedPolicy({ reply: ['<answer>Right</answer>'] });
  const { trajectories } = await rollout({ policy, env: makeLake, seeds: [3], maxTurns: 2, maxNewTokens: 5 });
  const [trajectory] = trajectories;
  const turn = at(trajectory!.turns, 0);
  assert.equal(turn.action, '<answ');
  assert.equal(turn.end - turn.start, 5);
  assert.equal(trajectory!.tokens[turn.end], byteSpecialTokens.end);
  assert.equal(trajectory!.lossMask[turn.end], 0);
  assert.equal(trajectory!.tokenRewards[turn.end - 1], turn.reward);
  assert.equal(turn.invalidAction, true);
  const rendered = await reRender(makeLake(), trajectory!);
  assert.deepEqual(trajectory!.tokens, rendered.tokens);
  const closings = new Set(trajectory!.turns.map((t) => t.end));
  assert.deepEqual(
    trajectory!.lossMask,
    rendered.assistantMask.map((m, t) => (closings.has(t) ? 0 : m)),
    'mask as rendered, except the closing <|end|>s',
  );
});

test('context window: an episode whose next prompt would not fit ends truncated, rewards kept, within the window', async () => {
  const env = makeLake();
  const seed = 3;
  const firstPrompt = renderGenerationPrompt([
    { role: 'system', content: env.instructions! },
    { role: 'user', content: (await env.reset({ seed })).text },
  ]).tokens;
  const reply = '<answer>Right</answer>';
  const maxNewTokens = 24;
  // Room for the first prompt + reply, but the second prompt (+ maxNewTokens + 1) overflows.
  const window = firstPrompt.length + maxNewTokens + 1 + 20;
  const policy = new ScriptedPolicy({ reply: [reply], contextWindow: window });
  const events: Array<{ completed: number; total: number }> = [];
  const { trajectories, stats } = await rollout({
    policy,
    env: () => makeFrozenLake({ formatPenalty: 0.1 }),
    seeds: [seed],
    maxTurns: 5,
    maxNewTokens,
    onEpisode: (_trajectory, progress) => events.push(progress),
  });
  const [trajectory] = trajectories;
  assert.equal(trajectory!.turns.length, 1);
  assert.equal(trajectory!.truncated, true);
  assert.equal(
    trajectory!.tokens.length,
    firstPrompt.length + byteTokenizer.encode(reply).length + 1,
    'the unseen observation is not appended',
  );
  assert.ok(trajectory!.tokens.length <= window);
  assert.equal(trajectory!.totalReward, at(trajectory!.turns, 0).reward);
  assert.deepEqual(events, [{ completed: 1, total: 1 }]);
  assert.equal(stats.meanTurns, 1);

  // A window that cannot hold the first prompt + maxNewTokens + 1: nothing can be generated, so the rollout says so.
  await assert.rejects(
    rollout({
      policy: new ScriptedPolicy({ reply: [reply], contextWindow: firstPrompt.length + maxNewTokens }),
      env: makeLake,
      seeds: [seed],
      maxNewTokens,
    }),
    (error: unknown) =>
      error instanceof PromptTooLongError && error.details.neededWindow === firstPrompt.length + maxNewTokens + 1,
  );

  // With a roomy window the same episode continues past the first turn.
  const roomy = await rollout({
    policy: new ScriptedPolicy({ reply: [reply], contextWindow: 4096 }),
    env: makeLake,
    seeds: [seed],
    maxTurns: 5,
    maxNewTokens,
  });
  assert.ok(at(roomy.trajectories, 0).turns.length > 1);
});

test('expert mode: the assistant tokens are the expert text + <|end|>; the expert solves frozen-lake', async () => {
  const seeds = splitSeeds('validation', 5);
  const { trajectories, stats } = await rollout({
    env: makeLake,
    seeds,
    expert: ({ seed }) => frozenLakeExpert({ seed }),
    maxTurns: 10,
  });
  assert.equal(stats.successRate, 1);
  assert.equal(stats.invalidActionRate, 0);
  for (const trajectory of trajectories) {
    assert.deepEqual(trajectory.tokens, (await reRender(makeLake(), trajectory)).tokens);
    assert.ok(trajectory.turns.every((turn) => /^<answer>(Left|Down|Right|Up)<\/answer>$/.test(turn.action)));
    assert.ok(trajectory.logprobs.every((logprob) => logprob === 0));
    assert.equal(trajectory.truncated, false);
  }
  const bandit = await rollout({ env: () => makeBandit(), seeds: [1, 2], expert: () => banditExpert() });
  assert.deepEqual(
    bandit.trajectories.map((t) => t.turns.map((turn) => turn.action)),
    [['<answer>B</answer>'], ['<answer>B</answer>']],
  );
});

test('rollout: bad options are rejected', async () => {
  await assert.rejects(rollout({ env: makeLake, seeds: [1] }), InvalidArgumentError);
  await assert.rejects(
    rollout({ policy: lakePolicy(), env: makeLake, seeds: [1], groupSize: 0 }),
    /groupSize must be a positive integer/,
  );
  await assert.rejects(rollout({ policy: lakePolicy(), env: makeLake, seeds: [1], tasks: [] }), InvalidArgumentError);
});

test('rollout: a stop string ends the reply, closed by an unmasked <|end|>; tokensPerSecond uses the given clock', async () => {
  const policy = new ScriptedPolicy({ reply: ['<answer>Right</answer> and more'] });
  const clock = [1000, 3000];
  const { trajectories, stats } = await rollout({
    policy,
    env: makeLake,
    seeds: [3],
    maxTurns: 1,
    stopStrings: ['</answer>'],
    now: () => clock.shift()!,
  });
  const trajectory = at(trajectories, 0);
  const turn = at(trajectory.turns, 0);
  assert.equal(turn.action, '<answer>Right</answer>');
  assert.equal(turn.invalidAction, false);
  assert.equal(trajectory.tokens[turn.end], byteSpecialTokens.end);
  assert.equal(trajectory.lossMask[turn.end], 0);
  assert.equal(trajectory.tokens.length, turn.end + 1);
  assert.equal(stats.generatedTokens, byteTokenizer.encode('<answer>Right</answer>').length);
  assert.equal(stats.tokensPerSecond, stats.generatedTokens / 2);
});

test('bounded history: each turn is a segment whose ids re-render system + the last k turns + the observation', async () => {
  const seeds = splitSeeds('train', 4);
  for (const historyTurns of [0, 1]) {
    const { trajectories } = await rollout({ policy: lakePolicy(), env: makeLake, seeds, maxTurns: 6, historyTurns });
    let checked = 0;
    for (const trajectory of trajectories) {
      const env = makeLake();
      const first = await env.reset({ seed: trajectory.seed });
      assert.equal(trajectory.segments!.length, trajectory.turns.length);
      const observations = [first.text, ...trajectory.turns.map((turn) => turn.observation)];
      trajectory.segments!.forEach((segment, t) => {
        const messages: Message[] = [{ role: 'system', content: env.instructions! }];
        for (let i = Math.max(0, t - historyTurns); i < t; i++) {
          messages.push(
            { role: 'user', content: at(observations, i) },
            { role: 'assistant', content: at(trajectory.turns, i).action },
          );
        }
        messages.push({ role: 'user', content: at(observations, t) });
        const prompt = renderGenerationPrompt(messages).tokens;
        const full = renderChat([...messages, { role: 'assistant', content: at(trajectory.turns, t).action }]);
        assert.deepEqual(segment.tokens, full.tokens, `turn ${t} (history ${historyTurns})`);
        // Only this turn's reply is trained; replies in the history are context (mask 0).
        assert.deepEqual(segment.lossMask, [...prompt.map(() => 0), ...full.assistantMask.slice(prompt.length)]);
        segment.logprobs.forEach((logprob, i) => {
          assert.equal(logprob, i >= prompt.length && segment.lossMask[i] === 1 ? -0.5 : 0);
        });
        checked++;
      });
    }
    assert.ok(checked > 8, `${checked} segments checked`);
  }
});

/** An env whose first observation is `seed` characters long: prompts of chosen lengths. */
const echoEnv = (): Env => ({
  name: 'echo',
  async reset({ seed }) {
    return { text: 'x'.repeat(seed) };
  },
  async step() {
    return { observation: { text: 'done' }, reward: 1, done: true, truncated: false, info: { success: true } };
  },
});

test('prompt that cannot fit: PromptTooLongError when no episode fits (naming lengths, window and the fix); a warning when some do', async () => {
  const promptOf = (seed: number) =>
    renderGenerationPrompt([{ role: 'user', content: 'x'.repeat(seed) }]).tokens.length;
  const maxNewTokens = 8;
  const window = promptOf(40) + maxNewTokens + 1; // seeds up to 40 fit
  const policy = new ScriptedPolicy({ reply: ['<answer>ok</answer>'], contextWindow: window });

  const error = await rollout({ policy, env: echoEnv, seeds: [50, 60], groupSize: 2, maxNewTokens }).catch(
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof PromptTooLongError, String(error));
  assert.equal(
    error.message,
    `none of the 4 episodes can start: the first prompt is ${promptOf(50)}–${promptOf(60)} tokens and the context window of ${window} must also hold maxNewTokens (8) + 1; ` +
      `raise the model's maxSeqLen to at least ${promptOf(60) + 9}, lower maxNewTokens, or shorten the prompt (instructions: false leaves out env.instructions)`,
  );
  assert.deepEqual(error.details, {
    episodes: 4,
    total: 4,
    shortestPrompt: promptOf(50),
    longestPrompt: promptOf(60),
    contextWindow: window,
    maxNewTokens,
    neededWindow: promptOf(60) + 9,
  });

  const warnings: string[] = [];
  const { trajectories } = await rollout({
    policy,
    env: echoEnv,
    seeds: [10, 50],
    maxNewTokens,
    onWarning: (message) => warnings.push(message),
  });
  assert.deepEqual(
    trajectories.map((t) => t.turns.length),
    [1, 0],
  );
  assert.deepEqual(warnings, [
    `1 of 2 episodes did not start (truncated, no tokens): the first prompt is ${promptOf(50)} tokens and the context window of ${window} must also hold maxNewTokens (8) + 1; raise the model's maxSeqLen to at least ${promptOf(50) + 9}, lower maxNewTokens, or shorten the prompt (instructions: false leaves out env.instructions)`,
  ]);

  const quiet: string[] = [];
  await rollout({ policy, env: echoEnv, seeds: [10, 20], maxNewTokens, onWarning: (message) => quiet.push(message) });
  assert.deepEqual(quiet, [], 'no warning when every prompt fits');
});
