/**
 * `agentrl/engine`: the one in-process engine, on onnxruntime-node — `TransformerModel` (weights,
 * LoRA adapters and AdamW moments; scoring and training) and `generate` (batched sampling with a
 * KV cache; `generateAcross` samples the rows of several LoRA forks of one base in one batch). Importing it loads nothing heavy: onnxruntime loads with the first session a model
 * makes.
 */
export { TransformerModel } from './transformer-model.ts';
export { generate } from './generate.ts';
export { type AcrossGroup, generateAcross } from './generate-across.ts';
export type { GenerateOptions, GeneratedRow } from '../model/generate-options.ts';
export type { OptimOptions } from '../model/optim-options.ts';
export type {
  BackwardOptions,
  BaseQuantization,
  LossReport,
  ModelOptions,
  ScoreOptions,
  ScoreResult,
  StepReport,
} from '../model/model-options.ts';
