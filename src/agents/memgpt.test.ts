import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Message } from '../core/types.ts';
import { renderGenerationPrompt } from '../chat/chat-template.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { ScriptedPolicy } from '../policy/scripted-policy.ts';
import { MemGPTAgent } from './memgpt.ts';
import { formatPage, MemoryStore } from './memory-store.ts';
import { at } from '../core/indexing.ts';

const call = (name: string, args: Record<string, unknown>): string =>
  `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;
const sampling = { maxNewTokens: 160 };

describe('MemGPT-style memory (scripted policy): the memory store', () => {
  test('memory store: keyword search, newest first among equals, paged results', () => {
    const store = new MemoryStore();
    for (let i = 0; i < 7; i++) store.insert(`fact ${i}: the cat sleeps`);
    store.insert('the dog barks');
    const first = store.search('cat fact', { pageSize: 3 });
    assert.equal(first.total, 7);
    assert.deepEqual(
      first.entries.map((entry) => entry.index),
      [6, 5, 4],
    );
    assert.deepEqual(
      store.search('cat fact', { page: 2, pageSize: 3 }).entries.map((entry) => entry.index),
      [0],
    );
    assert.equal(at(store.search('Dog').entries, 0).text, 'the dog barks');
    assert.equal(
      formatPage(store.search('cat', { page: 1, pageSize: 3 })),
      'Results 4-6 of 7 for "cat" (page 1 of 0-2):\n[3] fact 3: the cat sleeps\n[2] fact 2: the cat sleeps\n[1] fact 1: the cat sleeps',
    );
    assert.equal(
      formatPage(store.search('cat', { page: 5, pageSize: 3 })),
      'No page 5 for "cat": 7 results on pages 0-2.',
    );
    assert.equal(formatPage(store.search('zebra')), 'No results for "zebra".');
  });
});

describe('MemGPT-style memory (scripted policy): steps', () => {
  test('normal run: core memory and archival functions, heartbeat steps, send_message; every step a trajectory segment', async () => {
    const policy = new ScriptedPolicy({
      reply: ({ messages }) => {
        const last = at(messages, messages.length - 1);
        if (last.role === 'user') return call('core_memory_append', { name: 'human', content: 'Name: Ada' });
        if (last.content.startsWith('ok: human'))
          return call('archival_memory_insert', { content: "Ada's cat is called Turing." });
        return `<think>saved</think>${call('send_message', { message: 'Nice to meet you, Ada!' })}`;
      },
      logprob: -0.25,
    });
    const agent = new MemGPTAgent({ policy, persona: 'I am Sam.', sampling });
    const turn = await agent.send('My name is Ada and my cat is called Turing.');
    assert.equal(turn.stopReason, 'send_message');
    assert.equal(turn.reply, 'Nice to meet you, Ada!');
    assert.deepEqual(
      turn.steps.map((step) => [step.call?.name, step.result, step.error]),
      [
        ['core_memory_append', 'ok: human now holds 9 characters', false],
        ['archival_memory_insert', 'ok: saved as passage 0', false],
        ['send_message', '', false],
      ],
    );
    assert.deepEqual(agent.core, { persona: 'I am Sam.', human: 'Name: Ada' });
    assert.deepEqual(
      agent.archival.entries.map((entry) => entry.text),
      ["Ada's cat is called Turing."],
    );
    assert.equal(agent.recall.size, 6, 'user, 3 assistant replies, 2 function results');

    agent.reward(1);
    const trajectory = agent.trajectory({ success: true });
    assert.equal(trajectory.segments!.length, 3);
    const [first, second] = trajectory.segments!;
    assert.match(byteTokenizer.decode(first!.tokens), /<human>\n\n<\/human>/);
    assert.match(
      byteTokenizer.decode(second!.tokens),
      /<human>\nName: Ada\n<\/human>/,
      'the next step sees the edited working context',
    );
    for (const segment of trajectory.segments!) {
      const generated = segment.tokens.filter((_, t) => segment.lossMask[t] === 1);
      assert.equal(generated.at(-1), byteTokenizer.specialTokens.end);
      segment.logprobs.forEach((logprob, t) => {
        assert.equal(logprob, segment.lossMask[t] === 1 ? -0.25 : 0);
      });
    }
    assert.deepEqual(
      trajectory.turns.map((t) => t.reward),
      [0, 0, 1],
    );
    assert.equal(trajectory.totalReward, 1);
    assert.equal(trajectory.tokenRewards[at(trajectory.turns, 2).end - 1], 1);
    assert.equal(
      byteTokenizer.decode(trajectory.tokens.slice(at(trajectory.turns, 0).start, at(trajectory.turns, 0).end - 1)),
      at(turn.steps, 0).reply,
    );
  });
});

describe('MemGPT-style memory (scripted policy): memory pressure', () => {
  test('memory pressure: an alert near the budget, then eviction with a recursive summary; evicted messages stay searchable, in pages', async () => {
    const summaryRequests: string[] = [];
    let asking = false;
    const policy = new ScriptedPolicy({
      reply: ({ messages }) => {
        const first = at(messages, 0).content;
        if (first.startsWith('Write a short summary')) {
          summaryRequests.push(first);
          const covered = (first.match(/^user: Message number \d+/gm) ?? []).length;
          return `S${summaryRequests.length} (${covered} user messages)`;
        }
        const last = at(messages, messages.length - 1);
        if (last.content.startsWith('[system] Memory pressure'))
          return call('archival_memory_insert', { content: 'The user keeps reporting the weather.' });
        if (last.role === 'tool' && last.content.startsWith('Results'))
          return call('send_message', {
            message: last.content.split('\n').find((line) => line.includes('Message number 1:'))!,
          });
        if (asking) {
          asking = false;
          return call('conversation_search', { query: 'message number 1', page: 0 });
        }
        return call('send_message', { message: 'Noted.' });
      },
    });
    const base = new MemGPTAgent({ policy, sampling }).promptTokens();
    const agent = new MemGPTAgent({ policy, sampling, contextBudget: base * 4 + sampling.maxNewTokens + 1 });
    const limit = agent.contextBudget - sampling.maxNewTokens - 1;
    let alerts = 0;
    let evictionSeenAt = -1;
    for (let i = 1; i <= 80; i++) {
      const turn = await agent.send(`Message number ${i}: the weather is fine today in town ${i}.`);
      assert.equal(turn.stopReason, 'send_message');
      alerts += turn.steps.filter((step) => step.call?.name === 'archival_memory_insert').length;
      if (evictionSeenAt < 0 && agent.evicted > 0) evictionSeenAt = i;
      assert.ok(agent.promptTokens() <= limit + 200, 'the main context stays near the budget');
    }
    assert.ok(evictionSeenAt > 0, 'messages were evicted');
    assert.ok(alerts >= 2, `${alerts} pressure alerts (one per fill-up)`);
    assert.ok(summaryRequests.length >= 2, `${summaryRequests.length} summaries written`);
    assert.match(
      at(summaryRequests, 1),
      /^Summary of what came before: S1 \(\d+ user messages\)$/m,
      'the second summary is written from the first',
    );
    assert.match(agent.summary, new RegExp(`^S${summaryRequests.length} `));
    assert.match(at(agent.mainContext(), 1).content, /^\[system\] Summary of the earlier conversation: S\d+/);
    assert.ok(
      agent.queue.every((message) => !message.content.startsWith('Message number 1:')),
      'message 1 left the main context',
    );
    assert.equal(
      agent.recall.entries.filter((entry) => entry.text.startsWith('user: Message number')).length,
      80,
      'recall storage keeps every message',
    );

    asking = true;
    const answer = await agent.send('What was message number 1 about?');
    const search = answer.steps.find((step) => step.call?.name === 'conversation_search')!;
    assert.match(search.result, /^Results 1-5 of \d+ for "message number 1" \(page 0 of 0-\d+\):/);
    assert.equal(
      answer.reply,
      '[0] user: Message number 1: the weather is fine today in town 1.',
      'the evicted message 1 is on the first page',
    );
  });
});

describe('MemGPT-style memory (scripted policy): errors and the budget', () => {
  test('malformed output, function errors and the step limit', async () => {
    const replies = [
      'I will just talk without calling anything.',
      call('core_memory_replace', { name: 'human', old_content: 'Bob', new_content: 'Ada' }),
      call('core_memory_append', { name: 'nobody', content: 'x' }),
      call('core_memory_append', { name: 'human', content: 'y'.repeat(50) }),
      call('archival_memory_search', { query: 'anything', page: -1 }),
      '<tool_call>{"name": "send_message", "arguments": {</tool_call>',
    ];
    const agent = new MemGPTAgent({
      policy: new ScriptedPolicy({ reply: replies }),
      sampling,
      coreMemoryLimit: 40,
      maxSteps: 6,
    });
    const turn = await agent.send('hello');
    assert.equal(turn.stopReason, 'max-steps');
    assert.equal(turn.reply, undefined);
    const results = turn.steps.map((step) => step.result);
    assert.match(at(results, 0), /^\[system\] No function was called/);
    assert.equal(results[1], 'error: "Bob" is not in core memory block "human"');
    assert.match(at(results, 2), /^invalid arguments for core_memory_append: name: /);
    assert.match(at(results, 3), /^error: core memory block "human" would hold 50 characters; the limit is 40/);
    assert.match(at(results, 4), /^invalid arguments for archival_memory_search: page: /);
    assert.match(at(results, 5), /^\[system\] The function call could not be read/);
    assert.ok(turn.steps.every((step) => step.error));
    assert.equal(agent.core.human, '');
    assert.ok(agent.trajectory().turns.every((t) => t.invalidAction));
  });

  test('budget exhaustion: a message that cannot fit ends the turn; bad settings are rejected', async () => {
    const policy = new ScriptedPolicy({ reply: [call('send_message', { message: 'hi' })] });
    const base = new MemGPTAgent({ policy, sampling }).promptTokens();
    const agent = new MemGPTAgent({ policy, sampling, contextBudget: base + 300 });
    const turn = await agent.send('x'.repeat(400));
    assert.equal(turn.stopReason, 'context-budget');
    assert.equal(turn.steps.length, 0);
    assert.throws(
      () => new MemGPTAgent({ policy: new ScriptedPolicy({ reply: ['x'], contextWindow: 1000 }), contextBudget: 2000 }),
      InvalidArgumentError,
    );
    assert.throws(() => new MemGPTAgent({ policy, warningFraction: 1.5 }), /warningFraction must be in \(0, 1\)/);
  });
});

describe('MemGPT-style memory (scripted policy): the prompts the policy sees', () => {
  test('evicting a message longer than the budget: the summary request is cut to fit the window (was: a prompt over the window)', async () => {
    const window = 1024;
    const prompts: number[] = [];
    const policy = new ScriptedPolicy({
      contextWindow: window,
      reply: ({ messages }) => {
        prompts.push(renderGenerationPrompt(messages).tokens.length);
        return at(messages, 0).content.startsWith('Write a short summary')
          ? 'a long paste, then hello'
          : call('send_message', { message: 'hi' });
      },
    });
    const agent = new MemGPTAgent({
      policy,
      sampling,
      contextBudget: window,
      instructions: 'Act.',
      listFunctions: false,
    });
    // The paste alone is over the budget: with the memory-pressure alert queued after it, it is evicted and summarised.
    assert.equal((await agent.send(`paste: ${'x'.repeat(window)}`)).stopReason, 'send_message');
    assert.equal(agent.evicted, 1);
    assert.equal(agent.summary, 'a long paste, then hello');
    assert.ok(
      prompts.length === 2 && prompts.every((length) => length + sampling.maxNewTokens + 1 <= window),
      `prompts ${prompts.join(', ')} leave room for the reply`,
    );
  });

  test('the main context renders as the prompt the policy sees', async () => {
    let seen: Message[] = [];
    const policy = new ScriptedPolicy({
      reply: ({ messages }) => {
        seen = messages;
        return call('send_message', { message: 'hi' });
      },
    });
    const agent = new MemGPTAgent({ policy, sampling, human: 'Likes tea.' });
    await agent.send('hello');
    assert.equal(at(seen, 0).role, 'system');
    assert.match(
      at(seen, 0).content,
      /<human>\nLikes tea\.\n<\/human>\n### Memory: 1 messages in recall storage \(0 evicted from this context\), 0 passages in archival storage\.$/,
    );
    assert.deepEqual(seen.slice(1), [{ role: 'user', content: 'hello' }]);
    assert.equal(
      renderGenerationPrompt(seen).tokens.length,
      at(agent.trajectory().segments ?? [], 0).lossMask.indexOf(1),
    );
  });
});
