/**
 * `agentrl/model`: the built-in transformer (jax-js, loaded by the first model made), its configs,
 * generation, checkpoints and model sources (pulled names, GGUF files, Hugging Face folders).
 */
export { TransformerModel, type ScoreResult, type StepReport } from './model.ts';
export { generate, type GenerateOptions, type GeneratedRow } from './generate.ts';
export { modelConfigSchema, type ModelConfig, type ModelConfigInput, type HostParams } from './config.ts';
export { saveCheckpoint, loadCheckpoint } from './checkpoint.ts';
export {
  knownModels,
  loadModelCheckpoint,
  loadModelSource,
  modelCacheDir,
  pullModel,
  pulledModelPaths,
  resolveModelSource,
  ModelPullError,
} from './model-sources.ts';
export { loadGgufModel } from './gguf-model.ts';
