/**
 * Pins what the three recorders of conversations in token space write — the rollout's episodes
 * (episode.ts), the scaffolds' `Transcript` (agents/transcript.ts) and `MemGPTAgent` — for the
 * same small conversations, in agentrl's byte template and in a model's own format (tiny ChatML):
 * the exact ids, loss masks, log-probs, token rewards, turns and segments. The expected records
 * (fixtures/token-recording.json) were taken from the recorders before they shared one
 * `TokenTranscript`; each is shown as runs of equal (lossMask, log-prob) with their text, plus a
 * SHA-256 of the whole trajectory's JSON (every id, in order).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { MemGPTAgent } from '../agents/memgpt.ts';
import { runReAct } from '../agents/react.ts';
import { runToolLoop } from '../agents/tool-calling.ts';
import { rewardFinalTurn, Transcript } from '../agents/transcript.ts';
import type { ChatFormat } from '../chat/chat-format.ts';
import { tinyChatmlFormat } from '../chat/tiny-chatml.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { formatToolCalls } from '../chat/tool-call-format.ts';
import type { Env, Trajectory } from '../core/types.ts';
import { calculatorTool, makeCalculator } from '../envs/calculator/env.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { rollout } from './rollout.ts';

const expected = JSON.parse(
  readFileSync(new URL('./fixtures/token-recording.json', import.meta.url), 'utf8'),
) as Record<string, RecordView>;
const chatml = tinyChatmlFormat();

interface RecordView {
  runs: string[];
  rewards: [number, number][];
  turns: Trajectory['turns'];
  segments?: { turn: number; runs: string[] }[];
  ending: { totalReward: number; success: boolean; truncated: boolean; groupId: string; seed: number };
  sha256: string;
}

/** Runs of equal (lossMask, log-prob): "mask logprob |text|". */
function runs(
  tokens: readonly number[],
  lossMask: readonly number[],
  logprobs: readonly number[],
  decode: (ids: number[]) => string,
): string[] {
  const out: string[] = [];
  let start = 0;
  for (let t = 1; t <= tokens.length; t++) {
    if (t < tokens.length && lossMask[t] === lossMask[start] && logprobs[t] === logprobs[start]) continue;
    out.push(`${lossMask[start]} ${logprobs[start]} |${decode(tokens.slice(start, t))}|`);
    start = t;
  }
  return out;
}

function view(trajectory: Trajectory, format?: ChatFormat): RecordView {
  const decode = (ids: number[]): string => (format?.tokenizer ?? byteTokenizer).decode(ids);
  const { totalReward, success, truncated, groupId, seed } = trajectory;
  return {
    runs: runs(trajectory.tokens, trajectory.lossMask, trajectory.logprobs, decode),
    rewards: trajectory.tokenRewards.flatMap((reward, t): [number, number][] => (reward === 0 ? [] : [[t, reward]])),
    turns: trajectory.turns,
    ...(trajectory.segments === undefined
      ? {}
      : {
          segments: trajectory.segments.map((segment) => ({
            turn: segment.turn,
            runs: runs(segment.tokens, segment.lossMask, segment.logprobs, decode),
          })),
        }),
    ending: { totalReward, success, truncated, groupId, seed },
    sha256: createHash('sha256').update(JSON.stringify(trajectory)).digest('hex'),
  };
}

/** Each piece of the record first (a readable diff), then the hash of the whole. */
function assertRecord(name: string, trajectory: Trajectory, format?: ChatFormat): void {
  const actual = view(trajectory, format);
  const pinned = expected[name];
  assert.ok(pinned !== undefined, `no pinned record "${name}"`);
  assert.deepEqual(actual.runs, pinned.runs, `${name}: runs`);
  assert.deepEqual(actual.rewards, pinned.rewards, `${name}: token rewards`);
  assert.deepEqual(actual.turns, pinned.turns, `${name}: turns`);
  assert.deepEqual(actual.segments, pinned.segments, `${name}: segments`);
  assert.deepEqual(actual.ending, pinned.ending, `${name}: ending`);
  assert.equal(actual.sha256, pinned.sha256, `${name}: the whole trajectory`);
}

/** Three turns rewarded 0.5, -0.25, 1 (done); observations "obs 1", "obs 2". */
const threeTurnEnv = (): Env => {
  let turn = 0;
  return {
    name: 'three-turn',
    instructions: 'Reply briefly.',
    async reset({ seed }) {
      turn = 0;
      return { text: `start ${seed}` };
    },
    async step(action) {
      turn++;
      const reward = [0.5, -0.25, 1][turn - 1] ?? 0;
      return {
        observation: { text: `obs ${turn}` },
        reward,
        done: turn >= 3,
        truncated: false,
        info: { success: turn >= 3, invalidAction: action.text.includes('bad') },
      };
    },
  };
};
/** The second reply is cut by maxNewTokens 12. */
const threeReplies = ['<answer>a</answer>', 'bad and much too long to fit', '<answer>c</answer>'];

describe('rollout episodes (episode.ts)', () => {
  test('byte template, whole history: replies with their log-probs, a cut reply closed, rewards on turn ends', async () => {
    const policy = new ScriptedPolicy({ reply: threeReplies, logprob: -0.5 });
    const { trajectories } = await rollout({ policy, env: threeTurnEnv, seeds: [7], maxNewTokens: 12 });
    assertRecord('rollout-byte', trajectories[0] as Trajectory);
  });

  test('byte template, bounded history: one segment per turn', async () => {
    const policy = new ScriptedPolicy({ reply: threeReplies, logprob: -0.5 });
    const { trajectories } = await rollout({
      policy,
      env: threeTurnEnv,
      seeds: [7],
      maxNewTokens: 12,
      historyTurns: 1,
    });
    assertRecord('rollout-byte-bounded', trajectories[0] as Trajectory);
  });

  test('expert mode: the expert text + <|end|>, log-prob 0', async () => {
    const policy = new ScriptedPolicy({ reply: ['unused'] });
    const expert = () => ({ act: (observation: { text: string }) => `<answer>${observation.text}</answer>` });
    const { trajectories } = await rollout({ policy, env: threeTurnEnv, seeds: [3], expert, maxNewTokens: 40 });
    assertRecord('rollout-expert', trajectories[0] as Trajectory);
  });

  test('context window: the episode ends before an observation that would not fit', async () => {
    const policy = new ScriptedPolicy({ reply: threeReplies, logprob: -1, contextWindow: 70 });
    const { trajectories } = await rollout({ policy, env: threeTurnEnv, seeds: [7], maxNewTokens: 12 });
    assertRecord('rollout-window', trajectories[0] as Trajectory);
  });

  test('tiny ChatML: stop token + "\\n", a cut reply closed by the whole turn end', async () => {
    const policy = new ScriptedPolicy({
      reply: threeReplies,
      logprob: -0.5,
      tokenizer: chatml.tokenizer,
      chatFormat: chatml,
    });
    const { trajectories } = await rollout({ policy, env: threeTurnEnv, seeds: [7], maxNewTokens: 12 });
    assertRecord('rollout-chatml', trajectories[0] as Trajectory, chatml);
  });

  test('tiny ChatML, structured tool calls, bounded history', async () => {
    const call = { id: 'call_0_0', name: 'calculator', arguments: { expression: '2 * 3' } };
    const policy = new ScriptedPolicy({
      reply: [formatToolCalls('smollm2', [call]), '<answer>6</answer>'],
      logprob: -0.125,
      tokenizer: chatml.tokenizer,
      chatFormat: chatml,
    });
    const { trajectories } = await rollout({
      policy,
      env: () => makeCalculator(),
      tasks: [{ expression: '2 * 3' }],
      seeds: [0],
      historyTurns: 0,
      maxNewTokens: 160,
    });
    assertRecord('rollout-chatml-tools', trajectories[0] as Trajectory, chatml);
  });
});

describe('scaffold transcripts (agents/transcript.ts)', () => {
  for (const [name, format] of [
    ['byte', undefined],
    ['chatml', chatml],
  ] as const) {
    test(`${name}: generate (stopped, cut by a stop string, cut by maxNewTokens), observe, reward`, async () => {
      const replies = ['first reply', 'second STOP and more', 'a third reply that is long'];
      const policy = new ScriptedPolicy({
        reply: replies,
        logprob: -0.75,
        ...(format === undefined ? {} : { tokenizer: format.tokenizer, chatFormat: format }),
      });
      const transcript = new Transcript(policy, [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Go.' },
      ]);
      await transcript.generate({ maxNewTokens: 40 });
      transcript.reward(0.5);
      transcript.observe({ role: 'user', content: 'next' });
      await transcript.generate({ maxNewTokens: 40, stopStrings: ['STOP'] });
      transcript.observe(
        [
          { role: 'tool', content: 'r1', name: 't' },
          { role: 'tool', content: 'r2', name: 't' },
        ],
        { invalidAction: true },
      );
      transcript.reward(0);
      await transcript.generate({ maxNewTokens: 8 });
      transcript.reward(-1);
      transcript.reward(0.25);
      assertRecord(
        `transcript-${name}`,
        transcript.toTrajectory({ success: true, truncated: false, groupId: 'g', seed: 5 }),
        format,
      );
    });
  }

  test('no room for a full reply: generate refuses and nothing is appended', async () => {
    const policy = new ScriptedPolicy({ reply: ['ok'], contextWindow: 50 });
    const transcript = new Transcript(policy, [{ role: 'user', content: 'Hello there.' }]);
    assert.equal(await transcript.generate({ maxNewTokens: 40 }), undefined);
    assertRecord('transcript-no-room', transcript.toTrajectory({ success: false, truncated: true }));
  });

  test('tool loop and ReAct in tiny ChatML; rewardFinalTurn', async () => {
    const callText = `<tool_call>[{"name": "calculator", "arguments": {"expression": "6 * 7"}}]</tool_call>`;
    const tools = await runToolLoop({
      policy: new ScriptedPolicy({
        reply: [callText, 'It is 42.'],
        logprob: -0.5,
        tokenizer: chatml.tokenizer,
        chatFormat: chatml,
      }),
      tools: [calculatorTool],
      prompt: '6 * 7?',
    });
    assertRecord('tool-loop-chatml', rewardFinalTurn(tools.trajectory, 2), chatml);
    const replies = [
      'Thought: add\nAction: calculator[{"expression": "1 + 1"}]\nObservation: 3',
      'Thought: done\nAction: Finish[2]',
    ];
    const react = await runReAct({
      policy: new ScriptedPolicy({ reply: replies, logprob: -0.25, tokenizer: chatml.tokenizer, chatFormat: chatml }),
      tools: [calculatorTool],
      question: '1 + 1?',
      reward: (answer) => (answer === '2' ? 1 : 0),
    });
    assertRecord('react-chatml', react.trajectory, chatml);
  });
});

describe('MemGPT steps (agents/memgpt.ts)', () => {
  const call = (name: string, args: Record<string, unknown>): string =>
    `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;
  for (const [name, format] of [
    ['byte', undefined],
    ['chatml', chatml],
  ] as const) {
    test(`${name}: one segment per step (a cut step included), rewards on the latest step, rewardFinalTurn`, async () => {
      const replies =
        format === undefined
          ? [
              call('archival_memory_insert', { content: 'fact' }),
              call('send_message', { message: 'Hi.' }),
              'no function call at all; '.repeat(5),
              call('send_message', { message: 'Bye.' }),
            ]
          : [
              `<tool_call>[{"name": "archival_memory_insert", "arguments": {"content": "fact"}}]</tool_call>`,
              `<tool_call>[{"name": "send_message", "arguments": {"message": "Hi."}}]</tool_call>`,
              'no function call at all; '.repeat(5),
              `<tool_call>[{"name": "send_message", "arguments": {"message": "Bye."}}]</tool_call>`,
            ];
      const policy = new ScriptedPolicy({
        reply: replies,
        logprob: -0.5,
        ...(format === undefined ? {} : { tokenizer: format.tokenizer, chatFormat: format }),
      });
      const agent = new MemGPTAgent({
        policy,
        instructions: 'Be a memory agent.',
        listFunctions: false,
        sampling: { maxNewTokens: 96 },
        contextBudget: 4096,
      });
      await agent.send('Remember: fact.');
      agent.reward(0.5);
      agent.reward(0.25);
      await agent.send('Say bye.');
      agent.reward(1);
      assertRecord(`memgpt-${name}`, rewardFinalTurn(agent.trajectory({ success: true, seed: 2 }), 0.125), format);
    });
  }
});
