/**
 * The policy the examples run on:
 * - an OpenAI-compatible server when OPENAI_BASE_URL is set (with AGENTRL_MODEL, OPENAI_API_KEY):
 *     OPENAI_BASE_URL=http://127.0.0.1:8000/v1 AGENTRL_MODEL=Qwen/Qwen2.5-7B-Instruct npx tsx examples/react.ts
 * - else the built-in model from AGENTRL_CHECKPOINT (a folder written by `agentrl train` / `sft`);
 * - else a tiny random built-in model: the scaffold runs end to end, its replies are noise.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadCheckpoint } from '../src/model/checkpoint.ts';
import { TransformerModel } from '../src/engine/transformer-model.ts';
import { BuiltinPolicy } from '../src/policy/builtin-policy.ts';
import { OpenAIPolicy } from '../src/policy/openai-policy.ts';
import type { Policy } from '../src/policy/types.ts';

/**
 * maxSeqLen 1024: jax-js reuses a freed wasm buffer only for the same size class, so every new
 * prompt length bucket allocates anew; a scaffold whose prompt grows toward 2048 tokens (Reflexion
 * over ReAct) filled the 4 GiB wasm heap. Within 1024 every example stays far below it.
 */
export const tinyModel = {
  vocabSize: 272,
  hiddenSize: 32,
  numLayers: 1,
  numHeads: 2,
  numKvHeads: 2,
  intermediateSize: 64,
  maxSeqLen: 1024,
};

export async function examplePolicy(): Promise<{ policy: Policy; label: string }> {
  if (process.env.OPENAI_BASE_URL !== undefined) {
    const policy = new OpenAIPolicy({ maxRetries: 2 });
    return { policy, label: `${policy.model} at ${policy.baseURL}` };
  }
  const checkpoint = process.env.AGENTRL_CHECKPOINT;
  if (checkpoint !== undefined) {
    const loaded = await loadCheckpoint(checkpoint);
    const model = await TransformerModel.fromParams(loaded.config, loaded.params);
    return {
      policy: new BuiltinPolicy({ model, ...(loaded.tokenizer === undefined ? {} : { tokenizer: loaded.tokenizer }) }),
      label: `built-in model from ${checkpoint}`,
    };
  }
  return {
    policy: new BuiltinPolicy({ model: await TransformerModel.create(tinyModel, { seed: 0 }) }),
    label: 'a tiny random built-in model (replies are noise)',
  };
}

/** Runs `main` when the file is executed directly (not when a test imports it). */
export function runIfMain(url: string, main: () => Promise<void>): void {
  if (process.argv[1] !== undefined && url === pathToFileURL(resolve(process.argv[1])).href) {
    main().catch((error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    });
  }
}
