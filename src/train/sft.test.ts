import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { generate } from '../engine/generate.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { chatStopTokens, renderGenerationPrompt } from '../chat/chat-template.ts';
import { parseChatJsonl } from './chat-data.ts';
import { renderExamples, runSft } from './sft.ts';
import { at } from '../core/indexing.ts';

const jsonl = [
  {
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello there' },
    ],
  },
  {
    messages: [
      { role: 'user', content: '2+2?' },
      { role: 'assistant', content: '4' },
    ],
  },
  {
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'sky?' },
      { role: 'assistant', content: 'blue' },
    ],
  },
  {
    messages: [
      { role: 'user', content: 'name?' },
      { role: 'assistant', content: 'agentrl' },
      { role: 'user', content: 'again' },
      { role: 'assistant', content: 'agentrl!' },
    ],
  },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

test('SFT on a tiny chat set drives the loss below 0.05 and the model replays the replies greedily', async () => {
  const conversations = parseChatJsonl(jsonl, { file: 'tiny.jsonl' });
  const model = await TransformerModel.create(
    { vocabSize: 272, hiddenSize: 64, numLayers: 2, numHeads: 4, numKvHeads: 2, intermediateSize: 128, maxSeqLen: 64 },
    { seed: 0 },
  );
  const { examples } = renderExamples(conversations, byteTokenizer, 64);
  const result = await runSft({
    policy: new BuiltinPolicy({ model }),
    train: examples,
    heldOut: examples,
    config: { steps: 120, batchSize: 4, learningRate: 1e-2, warmupSteps: 5, evalEvery: 60 },
  });
  assert.ok(Number.isFinite(result.finalLoss));
  assert.ok(result.heldOutLoss! < 0.05, `held-out (= train set) assistant loss ${result.heldOutLoss}`);
  const last = at(result.history, result.history.length - 1);
  assert.ok(last.loss < 0.05, `last training loss ${last.loss}`);
  // Every assistant turn, prompted with the conversation before it, comes back exactly.
  const prompts: number[][] = [];
  const expected: string[] = [];
  for (const { messages } of conversations) {
    messages.forEach((message, i) => {
      if (message.role !== 'assistant') return;
      prompts.push(renderGenerationPrompt(messages.slice(0, i)).tokens);
      expected.push(message.content);
    });
  }
  const rows = await generate(model, prompts, {
    maxNewTokens: 16,
    temperature: 0,
    stopTokens: chatStopTokens(),
    decode: (ids) => byteTokenizer.decode(ids, { skipSpecialTokens: true }),
  });
  assert.deepEqual(
    rows.map((r) => r.text),
    expected,
  );
  assert.ok(rows.every((r) => r.finishReason === 'stop'));
});

test('a malformed JSONL line is reported with the file and the line', () => {
  const bad = `${jsonl.split('\n')[0]}\n\n{"messages": [{"role": "robot", "content": "x"}]}\n`;
  assert.throws(() => parseChatJsonl(bad, { file: 'data/chat.jsonl' }), /data\/chat\.jsonl:3: .*role/);
  assert.throws(() => parseChatJsonl('{"messages": [\n', { file: 'x.jsonl' }), /x\.jsonl:1: invalid JSON/);
});
