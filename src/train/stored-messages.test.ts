import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadChatFormat } from '../chat/model-folder.ts';
import { tinyChatmlTemplate, tinyTokenizerJson } from '../chat/tiny-chatml.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { renderChat } from '../chat/chat-template.ts';
import { Rng } from '../core/rng.ts';
import type { Trajectory } from '../core/types.ts';
import { TransformerModel } from '../engine/transformer-model.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { RunStore } from '../store/run-store.ts';
import type { IterationMetrics } from './rl.ts';
import { RunRecorder } from './run-recorder.ts';
import { storedMessages } from './stored-messages.ts';

function trajectory(tokens: number[], lossMask: number[]): Trajectory {
  return {
    tokens,
    lossMask,
    logprobs: tokens.map(() => 0),
    tokenRewards: tokens.map(() => 0),
    turns: [],
    totalReward: 1,
    success: true,
    groupId: 'g',
    seed: 0,
    truncated: false,
  };
}

test("run recorder: a model-tokenizer run's stored messages are decoded with the run's own tokenizer (they were empty: decoded with the byte one)", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentrl-stored-messages-'));
  const store = RunStore.open(join(dir, 'agentrl.db'));
  try {
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    writeFileSync(
      join(dir, 'tokenizer_config.json'),
      JSON.stringify({ eos_token: '<|im_end|>', chat_template: tinyChatmlTemplate }),
    );
    const chatFormat = loadChatFormat(dir);
    const prompt = chatFormat.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }).tokens;
    const reply = [...chatFormat.tokenizer.encode('ok'), ...chatFormat.stopTokens.slice(0, 1)];
    // 300 is past the tokenizer (a spare id a remote sampler may return): U+FFFD, never a throw.
    const tokens = [...prompt, ...reply, 300];
    const lossMask = [...prompt.map(() => 0), ...reply.map(() => 1), 1];
    const model = await TransformerModel.create(
      { vocabSize: 320, hiddenSize: 16, numLayers: 1, numHeads: 2, numKvHeads: 1, intermediateSize: 32, maxSeqLen: 64 },
      { seed: 1 },
    );
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    const recorder = new RunRecorder({ store, runId: run.id });
    await recorder.hooks().onTrajectories!([trajectory(tokens, lossMask)], 1);
    await recorder.commit(new BuiltinPolicy({ model, chatFormat }), { iteration: 1 } as IterationMetrics, {
      iteration: 1,
      rngState: new Rng(1).state(),
    });
    const stored = store.trajectory(run.id, 1, 0);
    assert.ok(stored !== undefined);
    assert.deepEqual(stored.messages, [
      {
        role: 'user',
        content:
          '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
      },
      { role: 'assistant', content: 'ok<|im_end|>\uFFFD' },
    ]);
    assert.equal(stored.pieces.at(-1), '\uFFFD');
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stored messages: the byte template keeps its exact role messages', () => {
  const rendered = renderChat([
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'ok' },
  ]);
  assert.deepEqual(storedMessages(rendered.tokens, rendered.assistantMask, byteTokenizer), [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'ok' },
  ]);
  assert.deepEqual(storedMessages([], [], byteTokenizer), []);
});
