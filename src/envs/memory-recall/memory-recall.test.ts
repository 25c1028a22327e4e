import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { at } from '../../core/indexing.ts';
import { Rng } from '../../core/rng.ts';
import { ScriptedPolicy } from '../../policy/scripted-policy.ts';
import { rollout } from '../../rollout/rollout.ts';
import type { Observation } from '../../core/index.ts';
import { envContract } from '../contract.ts';
import { playEpisode } from '../play.ts';
import { generateTask, makeMemoryRecall, searchPassages, type MemoryRecallData } from './env.ts';
import { memoryRecallExpert } from './expert.ts';

envContract('memory-recall', () => makeMemoryRecall(), { makeExpert: memoryRecallExpert });

const call = (name: string, args: Record<string, unknown>) =>
  `<tool_call>${JSON.stringify({ name, arguments: args })}</tool_call>`;

describe('memory-recall episodes', () => {
  test('facts, then distractors, then the question; the expert saves, searches and answers', async () => {
    const env = makeMemoryRecall({ facts: 2, fillerTurns: 2 });
    let observation = await env.reset({ seed: 4 });
    const expert = memoryRecallExpert();
    const seen: string[] = [observation.text];
    for (;;) {
      const result = await env.step({ text: expert.act(observation) });
      observation = result.observation;
      seen.push(observation.text);
      if (result.done) {
        assert.equal(result.reward, 1);
        assert.equal(result.info.success, true);
        break;
      }
    }
    const expected = [
      /^Remember: the code of locker \d+ is \d{4}\.$/,
      /^<tool_response>saved \(1 passages\)<\/tool_response>\nRemember: /,
      /^<tool_response>saved \(2 passages\)<\/tool_response>\nNote: the weather in town/,
      /^Note: the weather in town/,
      /^Question: what is the code of locker \d+\?/,
      /^<tool_response>locker \d+: \d{4}( \| locker \d+: \d{4})*<\/tool_response>\nQuestion:/, // a search answers with the saved facts and asks again
    ];
    expected.forEach((pattern, index) => {
      assert.match(at(seen, index, 'observations'), pattern);
    });
    assert.equal(seen.at(-1), 'correct');
  });

  test('without memory tools a tool call is an invalid turn, and the no-memory expert cannot answer', async () => {
    const env = makeMemoryRecall({ memoryTools: false });
    assert.deepEqual(env.tools, []);
    await env.reset({ seed: 1 });
    const result = await env.step({ text: call('memory_insert', { text: 'x' }) });
    assert.equal(result.info.invalidAction, true);
    assert.match(result.observation.text, /^invalid: unknown tool "memory_insert"; allowed: none\n/);

    let solved = 0;
    for (let seed = 0; seed < 10; seed++) {
      solved += (await playEpisode(makeMemoryRecall({ memoryTools: false }), memoryRecallExpert(), seed)).success
        ? 1
        : 0;
    }
    assert.equal(solved, 0);
  });
});

describe('memory-recall without memory, tasks and search', () => {
  test('the no-memory expert guesses a code of the right length, uniformly: the chance ceiling of a memoryless policy', async () => {
    const answers = new Map<string, number>();
    let solved = 0;
    const episodes = 270;
    for (let seed = 0; seed < episodes; seed++) {
      const expert = memoryRecallExpert({ seed });
      let lastAction = '';
      const recording = { act: (observation: Observation) => (lastAction = expert.act(observation)) };
      const episode = await playEpisode(
        makeMemoryRecall({ facts: 2, fillerTurns: 1, codeDigits: 1, lockerDigits: 1, memoryTools: false }),
        recording,
        seed,
      );
      const answer = /<answer>(.*)<\/answer>/.exec(lastAction)?.[1] ?? '(no answer)';
      answers.set(answer, (answers.get(answer) ?? 0) + 1);
      solved += episode.success ? 1 : 0;
    }
    assert.deepEqual([...answers.keys()].sort(), ['1', '2', '3', '4', '5', '6', '7', '8', '9']);
    assert.ok(
      [...answers.values()].every((count) => count >= 15 && count <= 45),
      `roughly uniform: ${JSON.stringify([...answers])}`,
    );
    assert.ok(solved >= 15 && solved <= 45, `about 1 in 9 of ${episodes}: ${solved}`);
  });

  test('bad tool arguments and unknown tools are invalid; the episode is cut at maxTurns', async () => {
    const env = makeMemoryRecall({ maxTurns: 3 });
    const observation = await env.reset({ seed: 2 });
    const first = await env.step({ text: call('memory_insert', { note: 'x' }) });
    assert.equal(first.info.invalidAction, true);
    assert.equal(
      first.observation.text,
      `invalid: invalid arguments for memory_insert: text: Invalid input: expected string, received undefined\n${observation.text}`,
      'the message repeats',
    );
    const second = await env.step({ text: call('memory_delete', {}) });
    assert.match(second.observation.text, /unknown tool "memory_delete"; allowed: memory_insert, memory_search/);
    const third = await env.step({ text: '<answer>ok</answer>' });
    assert.equal(third.truncated, true);
    assert.equal(third.info.success, false);
    assert.equal((third.observation.data as MemoryRecallData).turnsLeft, 0);
  });

  test('search ranks passages by shared words, newest first among equals, at most 3', () => {
    const passages = [
      'the code of locker 12 is 1111.',
      'the code of locker 40 is 2222.',
      'weather is fine',
      'the code of locker 12 is 3333.',
      'locker 99',
    ];
    assert.deepEqual(searchPassages(passages, 'code of locker 12'), [
      'the code of locker 12 is 3333.',
      'the code of locker 12 is 1111.',
      'the code of locker 40 is 2222.',
    ]);
    assert.deepEqual(searchPassages(passages, 'zebra'), []);
  });

  test('tasks are seeded: distinct lockers, 4-digit codes, the asked one among them', () => {
    const task = generateTask(new Rng(9), { facts: 5, fillerTurns: 3 });
    assert.deepEqual(generateTask(new Rng(9), { facts: 5, fillerTurns: 3 }), task);
    assert.equal(new Set(task.facts.map((fact) => fact.locker)).size, 5);
    assert.ok(task.facts.every((fact) => /^\d{4}$/.test(fact.code)));
    const short = generateTask(new Rng(5), { facts: 20, fillerTurns: 0, codeDigits: 2 });
    assert.ok(short.facts.every((fact) => /^[1-9]\d$/.test(fact.code)));
    const small = generateTask(new Rng(5), { facts: 9, fillerTurns: 0, codeDigits: 1, lockerDigits: 1 });
    assert.deepEqual(small.facts.map((fact) => fact.locker).sort(), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.throws(
      () => generateTask(new Rng(5), { facts: 10, fillerTurns: 0, lockerDigits: 1 }),
      /10 facts need more than 9 lockers/,
    );
    assert.throws(() => makeMemoryRecall({ facts: 10, lockerDigits: 1 }), /more facts than lockers/);
    assert.ok(task.asked >= 0 && task.asked < 5);
    assert.equal(task.fillers.length, 3);
  });
});

describe('memory-recall needs memory under a bounded history (rollout, scripted policies that read only their context)', () => {
  /** Replies from the visible messages only: saves facts when it has tools, answers from what it can see or find. */
  const reader = (tools: boolean) =>
    new ScriptedPolicy({
      reply: ({ messages }) => {
        const last = messages.at(-1)?.content ?? '';
        const question = /what is the code of locker (\d+)\?/.exec(last);
        if (question === null) {
          const fact = /Remember: (the code of locker \d+ is \d+\.)/.exec(last)?.[1];
          return tools && fact !== undefined ? call('memory_insert', { text: fact }) : '<answer>ok</answer>';
        }
        const seen = messages.map((message) => message.content).join('\n');
        const known = new RegExp(`locker ${question[1]} is (\\d+)`).exec(seen);
        if (known !== null) return `<answer>${known[1]}</answer>`;
        return tools ? call('memory_search', { query: `code of locker ${question[1]}` }) : '<answer>0000</answer>';
      },
    });
  const success = async (tools: boolean, historyTurns: number | undefined) => {
    const { stats } = await rollout({
      policy: reader(tools),
      env: () => makeMemoryRecall({ memoryTools: tools, facts: 3, fillerTurns: 4 }),
      seeds: [0, 1, 2, 3, 4, 5],
      maxTurns: 20,
      maxNewTokens: 200,
      ...(historyTurns === undefined ? {} : { historyTurns }),
    });
    return stats.successRate;
  };

  test('full history: recall without tools works; history of 2 turns: only the memory tools recall', async () => {
    assert.equal(await success(false, undefined), 1);
    assert.equal(await success(false, 2), 0);
    assert.equal(await success(true, 2), 1);
  });
});
