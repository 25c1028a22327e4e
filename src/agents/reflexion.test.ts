import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Tool } from '../core/types.ts';
import { renderGenerationPrompt } from '../chat/chat-template.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { runReAct } from './react.ts';
import { describeReAct, reflectionsText, runReflexion } from './reflexion.ts';
import { at } from '../core/indexing.ts';

const lookup: Tool<string> = {
  name: 'lookup',
  description: 'The capital of a country.',
  inputSchema: z.string(),
  execute: (country) => ({ France: 'Paris' })[country] ?? 'unknown',
};

describe('Reflexion (scripted policy, ReAct actor)', () => {
  test('a failed trial leads to a reflection in episodic memory; the next trial is given it and succeeds', async () => {
    const seen: string[] = [];
    const policy = new ScriptedPolicy({
      reply: ({ messages }) => {
        const first = at(messages, 0).content;
        const last = at(messages, messages.length - 1).content;
        if (first.startsWith('You tried the task')) {
          seen.push(first);
          return ' I answered from memory and was wrong. Next time, use lookup before answering. ';
        }
        if (!first.includes('use lookup before answering')) return 'Thought: I remember it.\nAction: Finish[Lyon]';
        if (last.startsWith('Task:')) return 'Thought: check first.\nAction: lookup[France]';
        return 'Thought: confirmed.\nAction: Finish[Paris]';
      },
    });
    const question = 'What is the capital of France?';
    const result = await runReflexion({
      policy,
      task: question,
      trials: 3,
      attempt: async ({ reflections }) => {
        const run = await runReAct({
          policy,
          tools: [lookup],
          question,
          ...(reflections.length === 0 ? {} : { instructions: reflectionsText(reflections) }),
        });
        return {
          success: run.answer === 'Paris',
          transcript: describeReAct(run),
          feedback: `answer ${run.answer} is wrong`,
          result: run,
        };
      },
    });
    assert.equal(result.success, true);
    assert.equal(result.trials.length, 2);
    assert.equal(at(result.trials, 0).outcome.result.answer, 'Lyon');
    assert.equal(
      at(result.trials, 0).reflection,
      'I answered from memory and was wrong. Next time, use lookup before answering.',
    );
    assert.deepEqual(at(result.trials, 1).given, [at(result.trials, 0).reflection]);
    assert.deepEqual(
      at(result.trials, 1).outcome.result.steps.map((step) => step.action),
      ['lookup', 'Finish'],
    );
    assert.deepEqual(result.memory, [at(result.trials, 0).reflection]);
    assert.equal(seen.length, 1);
    assert.match(at(seen, 0), /Action 1: Finish\[Lyon\]/, 'the reflection prompt shows the failed attempt');
    assert.match(at(seen, 0), /Feedback: answer Lyon is wrong/);
  });

  test('trials run out: every failure reflected on (but the last), memory keeps the newest memorySize, an empty reflection is not kept', async () => {
    let reflections = 0;
    const policy = new ScriptedPolicy({ reply: () => (++reflections === 2 ? '   ' : `reflection ${reflections}`) });
    const given: string[][] = [];
    const result = await runReflexion({
      policy,
      task: 'impossible',
      trials: 4,
      memorySize: 1,
      attempt: async ({ reflections: memory }) => {
        given.push([...memory]);
        return { success: false, transcript: 'failed', result: null };
      },
    });
    assert.equal(result.success, false);
    assert.equal(result.trials.length, 4);
    assert.deepEqual(given, [[], ['reflection 1'], ['reflection 1'], ['reflection 3']]);
    assert.equal(reflections, 3, 'no reflection after the last trial');
    assert.equal(at(result.trials, 1).reflection, undefined);
    assert.deepEqual(result.memory, ['reflection 3']);
  });
});

describe('Reflexion (scripted policy, ReAct actor): settings and the context window', () => {
  test('bad settings are rejected', async () => {
    const policy = new ScriptedPolicy({ reply: ['x'] });
    const attempt = async () => ({ success: true, transcript: '', result: null });
    await assert.rejects(runReflexion({ policy, task: 't', attempt, trials: 0 }), InvalidArgumentError);
    await assert.rejects(runReflexion({ policy, task: 't', attempt, memorySize: 0 }), InvalidArgumentError);
  });
  test('a transcript longer than the context window: the reflection request keeps its end and fits (was: a prompt over the window)', async () => {
    const window = 600;
    const requests: string[] = [];
    const policy = new ScriptedPolicy({
      contextWindow: window,
      reply: ({ messages }) => {
        requests.push(at(messages, 0).content);
        return 'Look it up first.';
      },
    });
    const result = await runReflexion({
      policy,
      task: 'Name the capital.',
      trials: 2,
      sampling: { maxNewTokens: 50 },
      attempt: async () => ({ success: false, transcript: `${'step '.repeat(400)}LAST STEP`, result: null }),
    });
    assert.deepEqual(result.memory, ['Look it up first.']);
    assert.equal(requests.length, 1);
    assert.match(
      at(requests, 0),
      /Your attempt:\n\[… earlier text cut to fit the context window\]\n[step ]+LAST STEP\n/,
    );
    assert.ok(renderGenerationPrompt([{ role: 'user', content: at(requests, 0) }]).tokens.length + 50 + 1 <= window);
  });
});
