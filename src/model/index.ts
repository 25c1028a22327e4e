/**
 * `agentrl/model`: engine-neutral model code — configs, checkpoints, model sources (pulled names,
 * GGUF files, Hugging Face folders). The model itself (`TransformerModel`,
 * `generate`) is the engine's: `agentrl/engine`.
 */
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
