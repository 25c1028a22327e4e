/**
 * SmolLM2-135M's weights for bench:engine: the real ones (the pulled Q4_1 GGUF, dequantized to
 * float32 by the project's one model loader, src/model/model-sources.ts) or random ones of its
 * shape (the seeded initializer); and the real ones written as a Hugging Face folder for the
 * PyTorch peers (model/checkpoint.ts: config.json + model.safetensors, which transformers loads).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HostParams, ModelConfig } from '../src/model/config.ts';
import { smolModelConfig, type WeightKind } from './engine-workload.ts';

export interface BenchWeights {
  config: ModelConfig;
  params: HostParams;
}

/** The real model's (BENCH_MODEL) or random weights of SmolLM2's shape. */
export async function benchWeights(kind: WeightKind, model: string): Promise<BenchWeights> {
  if (kind === 'real') {
    const { loadModelCheckpoint } = await import('../src/model/model-sources.ts');
    const { config, params } = await loadModelCheckpoint(model);
    return { config, params };
  }
  const { modelConfigSchema } = await import('../src/model/config.ts');
  const { initHostParams } = await import('../src/model/params.ts');
  const config = modelConfigSchema.parse(smolModelConfig);
  return { config, params: initHostParams(config, 0) };
}

/** The real GGUF's path (for llama.cpp), resolved as every agentrl command resolves a model argument. */
export async function realGgufPath(model: string): Promise<string> {
  const { resolveModelSource } = await import('../src/model/model-sources.ts');
  return resolveModelSource(model).path;
}

/** In a child: writes the real weights as a Hugging Face folder at `dir` (float32 safetensors). */
export async function exportRealWeights(model: string, dir: string): Promise<void> {
  const { saveCheckpoint } = await import('../src/model/checkpoint.ts');
  const { config, params } = await benchWeights('real', model);
  await saveCheckpoint(dir, { config, params });
}

/** A fresh temporary folder for the exported weights, and its removal. */
export function exportFolder(): { dir: string; remove: () => void } {
  const parent = mkdtempSync(join(tmpdir(), 'agentrl-bench-engine-'));
  return { dir: join(parent, 'smollm2'), remove: () => rmSync(parent, { recursive: true, force: true }) };
}
