/**
 * Parameter initialisation, names and checks (host arrays; engine-neutral).
 * Init (GPT-2 / Llama practice): matrices ~ N(0, σ²), output projections (wo, wDown) scaled by
 * 1/√(2L), norms 1, biases 0, value head 0.
 *
 * Parameter order: device parameters, AdamW moments and gradients always hold their names in
 * the canonical order of `parameterShapes(config)`, whatever order a checkpoint stored them in
 * (safetensors sorts names). Float32 sums over parameters (the global gradient norm) depend on
 * that order, so one order everywhere is what makes a resumed run match an uninterrupted one bit
 * for bit.
 */
import { Rng } from '../core/rng.ts';
import { CheckpointError } from '../core/errors.ts';
import { parameterShapes, type HostParams, type ModelConfig } from './config.ts';

export function initHostParams(config: ModelConfig, seed: number): HostParams {
  const rng = new Rng(seed);
  const params: HostParams = new Map();
  const residualScale = 1 / Math.sqrt(2 * config.numLayers);
  for (const [name, shape] of parameterShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    const leaf = name.slice(name.lastIndexOf('.') + 1);
    if (leaf.endsWith('Norm')) data.fill(1);
    else if (leaf.startsWith('b') || name.startsWith('valueHead')) data.fill(0);
    else {
      const std = config.initStd * (leaf === 'wo' || leaf === 'wDown' ? residualScale : 1);
      for (let i = 0; i < size; i++) data[i] = rng.normal() * std;
    }
    params.set(name, { shape, data });
  }
  return params;
}

/** Names of the parameters that get weight decay (matrices, not norms or biases). */
export function decayedNames(config: ModelConfig): Set<string> {
  const names = new Set<string>();
  for (const [name, shape] of parameterShapes(config))
    if (shape.length === 2 && !name.startsWith('valueHead')) names.add(name);
  return names;
}

export function checkHostParams(config: ModelConfig, params: HostParams): void {
  const expected = parameterShapes(config);
  const missing = [...expected.keys()].filter((name) => !params.has(name));
  const unexpected = [...params.keys()].filter((name) => !expected.has(name));
  if (missing.length > 0 || unexpected.length > 0) {
    throw new CheckpointError(
      `parameters do not match the config: missing [${missing.join(', ')}], unexpected [${unexpected.join(', ')}]`,
      {
        missing,
        unexpected,
      },
    );
  }
  for (const [name, shape] of expected) {
    const actual = params.get(name)!;
    if (actual.shape.join(',') !== shape.join(',') || actual.data.length !== shape.reduce((a, b) => a * b, 1)) {
      throw new CheckpointError(`parameter ${name} has shape [${actual.shape}], the config needs [${shape}]`, { name });
    }
  }
}

/** The canonical parameter order (see the header). */
export function parameterNames(config: ModelConfig): string[] {
  return [...parameterShapes(config).keys()];
}
