import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import type { Tool } from '../core/types.ts';
import { calculatorTool } from '../envs/calculator/env.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { parseReActReply, runReAct } from './react.ts';
import { at } from '../core/indexing.ts';

const capitals = new Map([
  ['France', 'Paris'],
  ['Japan', 'Tokyo'],
]);
const lookup: Tool<string> = {
  name: 'lookup',
  description: 'The capital of a country.',
  inputSchema: z.string().min(1),
  execute: (country) => {
    const capital = capitals.get(country);
    if (capital === undefined) throw new Error(`no entry for "${country}"`);
    return capital;
  },
};

describe('ReAct (scripted policy)', () => {
  test('parses Thought / Action lines', () => {
    assert.deepEqual(parseReActReply('Thought: look it up.\nAction: lookup[France]'), {
      thought: 'look it up.',
      action: 'lookup',
      input: 'France',
    });
    assert.deepEqual(parseReActReply('Thought 2: done\nAction 2: Finish[Paris]\nObservation:'), {
      thought: 'done',
      action: 'Finish',
      input: 'Paris',
    });
    assert.equal(parseReActReply('I think the answer is Paris.'), undefined);
  });

  test('normal run: Thought → Action → Observation until Finish; τ recorded as steps and as tokens, the reward on the Finish turn', async () => {
    const policy = new ScriptedPolicy({
      reply: ({ messages }) => {
        const last = at(messages, messages.length - 1).content;
        if (last.startsWith('Task:'))
          return 'Thought: I need the capital of France.\nAction: lookup[France]\nObservation: (the model made this up)';
        if (last === 'Observation: Paris')
          return 'Thought: The capital is Paris; how long is the name?\nAction: calculator[{"expression": "2 + 3"}]';
        return 'Thought: Done.\nAction: Finish[Paris (5 letters)]';
      },
      logprob: -0.1,
    });
    const result = await runReAct({
      policy,
      tools: [lookup, calculatorTool],
      question: 'What is the capital of France?',
      reward: (answer) => (answer.startsWith('Paris') ? 1 : 0),
    });
    assert.equal(result.stopReason, 'finish');
    assert.equal(result.answer, 'Paris (5 letters)');
    assert.deepEqual(
      result.steps.map((step) => [step.action, step.input, step.observation]),
      [
        ['lookup', 'France', 'Paris'],
        ['calculator', '{"expression": "2 + 3"}', '5'],
        ['Finish', 'Paris (5 letters)', ''],
      ],
    );
    const { trajectory } = result;
    assert.equal(trajectory.turns.length, 3);
    assert.ok(
      at(trajectory.turns, 0).action.endsWith('Action: lookup[France]\nObservation:'),
      'generation stopped at the model’s own Observation:',
    );
    assert.deepEqual(
      trajectory.turns.map((turn) => turn.reward),
      [0, 0, 1],
    );
    assert.equal(trajectory.tokenRewards[at(trajectory.turns, 2).end - 1], 1);
    assert.equal(trajectory.totalReward, 1);
    assert.equal(trajectory.success, true);
    assert.equal(
      trajectory.lossMask.filter((mask) => mask === 1).length,
      trajectory.turns.reduce((sum, turn) => sum + turn.end - turn.start, 0),
    );
  });
});

describe('ReAct (scripted policy): failures and limits', () => {
  test('malformed output and tool errors are observations; the step limit ends the episode', async () => {
    const replies = [
      'I am not sure what to do.',
      'Thought: try it\nAction: lookup[Atlantis]',
      'Thought: maybe a search\nAction: search[Atlantis]',
      'Thought: again\nAction: lookup[]',
    ];
    const result = await runReAct({
      policy: new ScriptedPolicy({ reply: replies }),
      tools: [lookup],
      question: 'Capital of Atlantis?',
      maxSteps: 4,
    });
    assert.equal(result.stopReason, 'max-steps');
    assert.equal(result.answer, undefined);
    assert.match(at(result.steps, 0).observation, /^Invalid format/);
    assert.equal(at(result.steps, 1).observation, 'error: no entry for "Atlantis"');
    assert.equal(at(result.steps, 2).observation, 'unknown tool "search"; allowed: lookup');
    assert.match(at(result.steps, 3).observation, /^invalid arguments for lookup: input: /);
    assert.deepEqual(
      result.trajectory.turns.map((turn) => turn.invalidAction),
      [true, true, true, true],
    );
    assert.equal(result.trajectory.truncated, true);
    assert.equal(result.trajectory.success, false);
  });

  test('budget exhaustion: a context window with no room for another reply ends the episode', async () => {
    const policy = new ScriptedPolicy({ reply: ['Thought: look\nAction: lookup[Japan]'], contextWindow: 700 });
    const result = await runReAct({
      policy,
      tools: [lookup],
      question: 'Capital of Japan?',
      maxSteps: 100,
      sampling: { maxNewTokens: 64 },
    });
    assert.equal(result.stopReason, 'context-window');
    assert.ok(result.steps.length >= 2 && result.steps.every((step) => step.observation === 'Tokyo'));
    assert.ok(result.trajectory.tokens.length <= 700);
    assert.equal(result.trajectory.truncated, true);
  });
});
