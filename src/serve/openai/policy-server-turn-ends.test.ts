/**
 * Turn ends: a checkpoint trained with stop strings (its rollouts always ended at `</tool_call>` or
 * `</answer>`) is served so that every reply ends after them, kept in the reply, whatever the
 * client's `stop` — over the real HTTP path with the openai client, on a loaded checkpoint and on a
 * scripted policy.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import OpenAI from 'openai';
import { CheckpointError } from '../../core/errors.ts';
import { saveCheckpoint } from '../../model/checkpoint.ts';
import { startPolicyServer, type PolicyServer } from './policy-server.ts';
import { streamingScriptedPolicy } from './streaming-scripted-policy-fixture.ts';
import { talkativeModel } from './streaming-test-fixture.ts';

async function withServer<T>(server: PolicyServer, use: (openai: OpenAI) => Promise<T>): Promise<T> {
  try {
    return await use(new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 }));
  } finally {
    await server.close();
  }
}

const greedyReply = async (openai: OpenAI, stop?: string[]) => {
  const reply = await openai.chat.completions.create({
    model: 'tiny',
    messages: [{ role: 'user', content: 'hello' }],
    temperature: 0,
    max_tokens: 40,
    ...(stop === undefined ? {} : { stop }),
  });
  return { content: reply.choices[0]?.message.content ?? '', finish: reply.choices[0]?.finish_reason };
};

test('a loaded checkpoint ends every reply after the stop strings it was trained with, unless turnEnds says otherwise', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-turn-ends-'));
  try {
    const model = await talkativeModel(128);
    const params = await model.hostParams();
    await saveCheckpoint(join(dir, 'plain'), { config: model.config, params });
    const full = await withServer(
      await startPolicyServer({ model: join(dir, 'plain'), modelName: 'tiny', port: 0 }),
      (openai) => greedyReply(openai),
    );
    assert.equal(full.finish, 'length');
    // A string the greedy reply writes in its middle stands for the training's `</answer>`.
    const from = [...Array(full.content.length - 3).keys()].find(
      (i) =>
        i >= 8 &&
        !/\uFFFD/.test(full.content.slice(i, i + 3)) &&
        full.content.indexOf(full.content.slice(i, i + 3)) === i,
    );
    assert.ok(from !== undefined, `no stop string to pick in ${JSON.stringify(full.content)}`);
    const trained = full.content.slice(from, from + 3);

    await saveCheckpoint(join(dir, 'trained'), { config: model.config, params, extra: { stopStrings: [trained] } });
    const loaded = await startPolicyServer({ model: join(dir, 'trained'), modelName: 'tiny', port: 0 });
    assert.deepEqual(loaded.turnEnds, [trained]);
    const ended = await withServer(loaded, async (openai) => ({
      plain: await greedyReply(openai),
      // The client's own stop strings still apply, before the turn end; one after it is never reached.
      clientStop: await greedyReply(openai, [full.content.slice(2, 4)]),
    }));
    assert.deepEqual(ended.plain, { content: full.content.slice(0, from + 3), finish: 'stop' });
    assert.equal(ended.clientStop.content, full.content.slice(0, full.content.indexOf(full.content.slice(2, 4))));

    const raw = await startPolicyServer({ model: join(dir, 'trained'), modelName: 'tiny', port: 0, turnEnds: [] });
    assert.deepEqual(raw.turnEnds, []);
    assert.deepEqual(await withServer(raw, (openai) => greedyReply(openai)), full);

    await saveCheckpoint(join(dir, 'bad'), { config: model.config, params, extra: { stopStrings: '</answer>' } });
    await assert.rejects(
      startPolicyServer({ model: join(dir, 'bad'), modelName: 'tiny', port: 0 }),
      (error: unknown) =>
        error instanceof CheckpointError &&
        /metadata "stopStrings" is not a list of non-empty strings/.test(error.message),
    );
    await model.release();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('with tools, a call closed by a turn end is the whole reply: parsed as tool_calls, the text after it never reaches the client', async () => {
  const call = '<tool_call>{"name":"calculator","arguments":{"expression":"12 * 34"}}</tool_call>';
  const requests: (readonly string[])[] = [];
  const policy = streamingScriptedPolicy({
    reply: [`${call}<script>more`, '<answer>408</answer> and more'],
    onRequest: (request) => requests.push(request.stopStrings ?? []),
  });
  const tools = [
    {
      type: 'function' as const,
      function: { name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } } } },
    },
  ];
  const server = await startPolicyServer({
    policy,
    modelName: 'tiny',
    port: 0,
    turnEnds: ['</answer>', '</tool_call>'],
  });
  await withServer(server, async (openai) => {
    const messages = [{ role: 'user' as const, content: 'What is 12 * 34?' }];
    const first = await openai.chat.completions.create({ model: 'tiny', messages, tools });
    assert.equal(first.choices[0]?.finish_reason, 'tool_calls');
    assert.deepEqual(
      first.choices[0]?.message.tool_calls?.map((c) =>
        c.type === 'function' ? [c.function.name, c.function.arguments] : [],
      ),
      [['calculator', '{"expression":"12 * 34"}']],
    );
    assert.equal(first.choices[0]?.message.content ?? '', '');
    const second = await openai.chat.completions.create({ model: 'tiny', messages, tools, stream: true });
    let content = '';
    for await (const chunk of second) content += chunk.choices[0]?.delta.content ?? '';
    assert.equal(content, '<answer>408</answer>');
  });
  // Generation itself stops there: the policy is asked to stop at the turn ends.
  assert.deepEqual(requests, [
    ['</answer>', '</tool_call>'],
    ['</answer>', '</tool_call>'],
  ]);
});
