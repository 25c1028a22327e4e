import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tinyChatmlTemplate, tinyTokenizerJson } from '../chat/tiny-chatml.ts';
import { InvalidArgumentError } from '../core/errors.ts';
import { backendSchema, tinkerPolicyOptions } from './backend-setup.ts';

test("tinker backend: the model's tokenizer and chat format come from --base-model (a local folder) or --tokenizer (hosted Tinker); a hub name alone is refused naming --tokenizer; --tokenizer bytes is agentrl's byte tokenizer", () => {
  const folder = mkdtempSync(join(tmpdir(), 'agentrl-tinker-tokenizer-'));
  try {
    writeFileSync(join(folder, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
    writeFileSync(
      join(folder, 'tokenizer_config.json'),
      JSON.stringify({ eos_token: '<|im_end|>', chat_template: tinyChatmlTemplate }),
    );
    const flags = (extra: Record<string, unknown>) => ({
      ...backendSchema.parse({ backend: 'tinker', baseUrl: 'http://127.0.0.1:1', ...extra }),
      seed: 0,
    });
    const local = tinkerPolicyOptions(flags({ baseModel: folder }));
    assert.equal(
      local.chatFormat?.tokenizer.decode(
        local.chatFormat.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }).tokens,
      ),
      '<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
    assert.equal(local.tokenizer, local.chatFormat?.tokenizer);
    const hosted = tinkerPolicyOptions(
      flags({ baseModel: 'Qwen/Qwen3-8B', tokenizer: join(folder, 'tokenizer.json') }),
    );
    assert.deepEqual(hosted.chatFormat?.stopTokens, [2]);
    // Before: a hub name alone trained silently on the byte tokenizer and exited 0.
    assert.throws(
      () => tinkerPolicyOptions(flags({ baseModel: 'Qwen/Qwen3-8B' })),
      (error: unknown) =>
        error instanceof InvalidArgumentError &&
        /--base-model Qwen\/Qwen3-8B is not a local folder holding tokenizer\.json.*pass --tokenizer/.test(
          error.message,
        ),
    );
    const bytes = tinkerPolicyOptions(flags({ baseModel: 'Qwen/Qwen3-8B', tokenizer: 'bytes' }));
    assert.equal(bytes.chatFormat, undefined);
    assert.equal(bytes.tokenizer, undefined);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
