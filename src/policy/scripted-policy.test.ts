import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import type { Message } from '../core/types.ts';
import { renderChat, renderGenerationPrompt } from '../chat/chat-template.ts';
import { tokenPieces } from '../chat/token-text.ts';
import { byteSpecialTokens, byteTokenizer } from '../chat/tokenizer.ts';
import { policyContract } from './contract.ts';
import { ScriptedPolicy, firstStopStringEnd, messagesFromTokens } from './scripted-policy.ts';

policyContract(
  'scripted',
  () =>
    new ScriptedPolicy({
      reply: ({ messages }) => `<answer>${messages.at(-1)?.content.length} chars</answer>`,
      logprob: -0.5,
    }),
);
policyContract(
  'scripted (list, no window)',
  () => new ScriptedPolicy({ reply: ['<think>hm</think><answer>Right</answer>'] }),
);

const prompt = renderGenerationPrompt([
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'hello' },
]).tokens;

test('scripted: reply ids are the encoded text plus <|end|>, each with the given log-prob', async () => {
  const policy = new ScriptedPolicy({ reply: ['<answer>A</answer>', 'second'], logprob: -0.25 });
  const first = await policy.generate({ prompt, maxNewTokens: 64 });
  assert.deepEqual(first.tokens, [...byteTokenizer.encode('<answer>A</answer>'), byteSpecialTokens.end]);
  assert.deepEqual(
    first.logprobs,
    first.tokens.map(() => -0.25),
  );
  assert.equal(first.text, '<answer>A</answer>');
  assert.equal(first.finishReason, 'stop');
  assert.equal((await policy.generate({ prompt, maxNewTokens: 64 })).text, 'second');
  assert.equal((await policy.generate({ prompt, maxNewTokens: 64 })).text, '<answer>A</answer>', 'the list cycles');
});

test('scripted: maxNewTokens and the context window cut the reply (length), stop strings end it (stop)', async () => {
  const policy = new ScriptedPolicy({ reply: ['<answer>Left</answer>'], contextWindow: prompt.length + 5 });
  const cut = await policy.generate({ prompt, maxNewTokens: 3 });
  assert.deepEqual(cut, {
    tokens: byteTokenizer.encode('<an'),
    logprobs: [0, 0, 0],
    text: '<an',
    finishReason: 'length',
  });
  assert.equal((await policy.generate({ prompt, maxNewTokens: 64 })).tokens.length, 5);
  const stopped = await new ScriptedPolicy({ reply: ['<answer>Left</answer> more'] }).generate({
    prompt,
    maxNewTokens: 64,
    stopStrings: ['</answer>'],
  });
  assert.equal(stopped.text, '<answer>Left</answer>');
  assert.equal(stopped.finishReason, 'stop');
});

test('scripted: the reply function sees the prompt messages and its call index', async () => {
  const seen: Array<{ messages: Message[]; index: number }> = [];
  const policy = new ScriptedPolicy({
    reply: ({ messages, index }) => {
      seen.push({ messages, index });
      return 'ok';
    },
  });
  await policy.generateBatch([
    { prompt, maxNewTokens: 4 },
    { prompt, maxNewTokens: 4 },
  ]);
  assert.deepEqual(seen, [
    {
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hello' },
      ],
      index: 0,
    },
    {
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hello' },
      ],
      index: 1,
    },
  ]);
});

test('messagesFromTokens inverts renderChat for plain messages', () => {
  const messages: Message[] = [
    { role: 'system', content: 'S' },
    { role: 'user', content: 'héllo <|end|>' },
    { role: 'assistant', content: '<answer>1</answer>' },
    { role: 'tool', content: '{"x":1}' },
  ];
  assert.deepEqual(messagesFromTokens(renderChat(messages).tokens), messages);
  // A rendering cut inside a reply: the unfinished message is dropped, or kept with includeUnfinished.
  const cut = [
    ...renderChat(messages.slice(0, 2)).tokens,
    byteTokenizer.specialTokens.assistant,
    ...byteTokenizer.encode('<ans'),
  ];
  assert.deepEqual(messagesFromTokens(cut), messages.slice(0, 2));
  assert.deepEqual(messagesFromTokens(cut, byteTokenizer, { includeUnfinished: true }).at(-1), {
    role: 'assistant',
    content: '<ans',
  });
});

test('scripted: bad options are rejected', () => {
  assert.throws(() => new ScriptedPolicy({ reply: [] }), InvalidArgumentError);
  assert.throws(() => new ScriptedPolicy({ reply: ['x'], logprob: 0.5 }), InvalidArgumentError);
});

test('firstStopStringEnd: a spare id the tokenizer lacks (a remote sampler may return one) reads as U+FFFD, not an error', () => {
  const ids = [...byteTokenizer.encode('ab'), 265, ...byteTokenizer.encode('</answer>x')];
  assert.equal(firstStopStringEnd(ids, ['</answer>'], byteTokenizer), ids.length - 1);
  assert.equal(firstStopStringEnd([265, 266], ['</answer>'], byteTokenizer), undefined);
});

test('a trajectory with a spare id reads back (messages, token pieces) with U+FFFD for it, as the run recorder needs', () => {
  const prompt = renderGenerationPrompt([{ role: 'user', content: 'hi' }]).tokens;
  const ids = [...prompt, 97, 265, 98];
  assert.deepEqual(messagesFromTokens(ids, byteTokenizer, { includeUnfinished: true }).at(-1), {
    role: 'assistant',
    content: 'a\uFFFDb',
  });
  assert.deepEqual(tokenPieces(ids, byteTokenizer).slice(-3), ['a', '\uFFFD', 'b']);
});
