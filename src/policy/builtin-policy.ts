/**
 * `BuiltinPolicy`: the in-process engine's transformer (src/engine) as a `TrainablePolicy`.
 *
 *   const policy = new BuiltinPolicy({ model: await TransformerModel.create({ maxSeqLen: 256 }) });
 *   const [a, b] = await policy.generateBatch([{ prompt, maxNewTokens: 32 }, { prompt: other, maxNewTokens: 32 }]);
 *
 * `generateBatch` runs all requests that share their sampling options in ONE `generate` call
 * (left-padded batch with a KV cache) — where the CPU speed comes from. The batch shares one
 * sampler seeded by the request seed, so a row's sample depends on the batch it ran in; the same
 * batch with the same seed replays exactly.
 *
 * Each row may use the window up to `maxSeqLen` − its prompt length (positions count per row).
 *
 * Ids of the vocabulary the tokenizer lacks (spare ids) are never sampled (`maxTokenId`).
 *
 * Log-probs are those of the temperature-scaled distribution (model/sampling.ts), so
 * `logprobs({ sequences, temperature })` with the sampling temperature reproduces them, and
 * `forwardBackward` / `trainStep` at that temperature train the distribution that was sampled.
 *
 * Beyond the contract: `values` (the value head, when the model has one) and `trainStep`, the
 * engine's forward + backward + AdamW step in one call, which the trainers use when present.
 * `saveState` is the model's weights, AdamW moments and step counter (./builtin-state.ts), bit
 * for bit.
 *
 * Sampling runs on the model's generation session, quantized when the model was made with
 * `baseQuantization: 'int8'` (or 'int4'); `logprobs`, `forwardBackward` and `trainStep` read the
 * float32 weights (docs/engine.md, Quantized base for generation).
 *
 * A pretrained model comes with its own chat format (`chatFormat`: its tokenizer, Jinja template,
 * stop tokens, tool-call format; src/chat): the rollout renders with it, and `save` writes its
 * tokenizer files so the checkpoint reloads in the same format (model/checkpoint.ts). A LoRA
 * model's `save` also writes its adapters in PEFT's layout under `adapter/` (with a trained value
 * head as PEFT's `modules_to_save`, model/lora-peft.ts): the folder itself holds merged weights,
 * and an adapter_config.json there would make transformers load it as an adapter.
 */
import type { ChatFormat } from '../chat/chat-format.ts';
import { CheckpointError, InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import type { TokenLoss } from '../core/loss.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { adapterFiles } from '../model/lora-peft.ts';
import { generate } from '../engine/generate.ts';
import type { TransformerModel } from '../engine/transformer-model.ts';
import type { HostParams } from '../model/config.ts';
import { byteTokenizer, type Tokenizer } from '../chat/tokenizer.ts';
import { captureBuiltinState, parseBuiltinState, restoreBuiltinModel, serializeBuiltinState } from './builtin-state.ts';
import { decodeGenerated, generationText, groupBySampling, resolveRequest } from './request.ts';
import type {
  GenerateBatchOptions,
  GenerateRequest,
  Generation,
  LossReport,
  OptimOptions,
  OptimReport,
  PolicyCapabilities,
  SaveOptions,
  StepReport,
  TokenBatch,
  TrainablePolicy,
} from './types.ts';

export interface BuiltinPolicyOptions {
  model: TransformerModel;
  /** Default: the chat format's tokenizer, else the built-in byte tokenizer. Its ids must fit the model's vocabulary. */
  tokenizer?: Tokenizer;
  /** The model's own chat protocol (a pretrained model's); default none: agentrl's byte template. */
  chatFormat?: ChatFormat;
}

export class BuiltinPolicy implements TrainablePolicy {
  readonly backend = 'builtin';
  readonly capabilities: PolicyCapabilities;
  readonly model: TransformerModel;
  readonly tokenizer: Tokenizer;
  readonly contextWindow: number;
  readonly chatFormat?: ChatFormat;

  constructor({ model, chatFormat, tokenizer = chatFormat?.tokenizer ?? byteTokenizer }: BuiltinPolicyOptions) {
    if (tokenizer.vocabSize > model.config.vocabSize) {
      throw new InvalidArgumentError(
        `tokenizer has ${tokenizer.vocabSize} ids but the model's vocabSize is ${model.config.vocabSize}`,
        {
          tokenizerVocabSize: tokenizer.vocabSize,
          vocabSize: model.config.vocabSize,
        },
      );
    }
    this.model = model;
    this.tokenizer = tokenizer;
    if (chatFormat !== undefined) this.chatFormat = chatFormat;
    this.contextWindow = model.config.maxSeqLen;
    this.capabilities = { valueHead: model.config.valueHead, entropy: true, gradientClipping: true };
  }

  /** A policy restored from `saveState` bytes: a new model with those weights, moments and step counter. */
  static async fromState(
    state: Uint8Array,
    {
      tokenizer,
      chatFormat,
      source,
      baseParams,
    }: { tokenizer?: Tokenizer; chatFormat?: ChatFormat; source?: string; baseParams?: HostParams } = {},
  ): Promise<BuiltinPolicy> {
    return new BuiltinPolicy({
      model: await restoreBuiltinModel(parseBuiltinState(state, { source }), { baseParams }),
      tokenizer,
      chatFormat,
    });
  }

  async generate(request: GenerateRequest): Promise<Generation> {
    return at(await this.generateBatch([request]), 0, 'generations');
  }

  /**
   * `onToken` sees each sampled id as it is sampled (the generation yields between decode steps);
   * an aborted `signal` stops the generation at its next decode step and rejects with its reason.
   */
  async generateBatch(
    requests: readonly GenerateRequest[],
    { onToken, signal }: GenerateBatchOptions = {},
  ): Promise<Generation[]> {
    const resolved = requests.map((request) =>
      resolveRequest(request, this.tokenizer, this.contextWindow, this.model.config.vocabSize),
    );
    const results = new Array<Generation>(requests.length);
    const decode = (ids: readonly number[]): string => decodeGenerated(this.tokenizer, ids);
    for (const group of groupBySampling(resolved)) {
      signal?.throwIfAborted();
      const members = group.map((index) => at(resolved, index, 'requests'));
      const options = at(members, 0, 'sampling group');
      const rows = await generate(
        this.model,
        members.map((member) => member.prompt),
        {
          maxNewTokens: options.maxNewTokens,
          temperature: options.temperature,
          topP: options.topP,
          stopTokens: options.stopTokens,
          stopStrings: options.stopStrings,
          decode,
          seed: options.seed,
          // Spare ids of the vocabulary the tokenizer lacks are never sampled.
          maxTokenId: this.tokenizer.vocabSize,
          ...(onToken === undefined && signal === undefined
            ? {}
            : {
                // Throwing here ends the engine's generation: an abort stops it at this decode step.
                onToken: (row: number, token: number, logprob: number) => {
                  signal?.throwIfAborted();
                  onToken?.(at(group, row, 'sampling group'), token, logprob);
                },
              }),
        },
      );
      rows.forEach((row, i) => {
        results[at(group, i, 'sampling group')] = {
          tokens: row.tokens,
          logprobs: row.logprobs,
          text: generationText(row.tokens, row.finishReason, options, this.tokenizer),
          finishReason: row.finishReason,
        };
      });
    }
    return results;
  }

  async logprobs(batch: TokenBatch): Promise<Float32Array[]> {
    return (await this.model.score(batch.sequences, { temperature: batch.temperature ?? 1, lossMask: batch.lossMask }))
      .logprobs;
  }

  /** The value head's per-token values (PPO's critic); the model must have one. */
  async values(batch: TokenBatch): Promise<Float32Array[]> {
    if (!this.model.config.valueHead)
      throw new InvalidArgumentError('values: the model has no value head (create it with valueHead: true)');
    const { values } = await this.model.score(batch.sequences);
    if (values === undefined)
      throw new InvalidArgumentError('values: the engine returned no values for a value-head model');
    return values;
  }

  async forwardBackward(batch: TokenBatch, loss: TokenLoss): Promise<LossReport> {
    return this.model.forwardBackward(batch.sequences, loss, { temperature: batch.temperature ?? 1 });
  }

  async optimStep(options: OptimOptions): Promise<OptimReport> {
    return this.model.optimStep(options);
  }

  /** forwardBackward + optimStep as the engine's fused step. */
  async trainStep(batch: TokenBatch, loss: TokenLoss, options: OptimOptions): Promise<StepReport> {
    return this.model.trainStep(batch.sequences, loss, { ...options, temperature: batch.temperature ?? 1 });
  }

  /** A Hugging Face folder (merged weights for a LoRA model, its PEFT adapter under `adapter/`) with the chat format's tokenizer files when the policy has one. */
  async save(path: string, { metadata }: SaveOptions = {}): Promise<void> {
    if (this.chatFormat !== undefined && this.chatFormat.files === undefined) {
      throw new CheckpointError(
        `save: the chat format "${this.chatFormat.name}" has no model files to write (make it with chatFormatFromFiles / loadChatFormat)`,
        { path },
      );
    }
    const chatFiles = this.chatFormat?.files;
    await saveCheckpoint(path, {
      config: this.model.config,
      params: await this.model.hostParams(),
      tokenizer: this.tokenizer,
      extra: metadata,
      ...(chatFiles === undefined ? {} : { chatFiles }),
      // The PEFT adapter in the same atomic save: a crash never leaves a checkpoint without it.
      ...(this.model.lora === null
        ? {}
        : {
            subfolderFiles: adapterFiles(this.model.peftAdapter()).map(
              ([name, data]) => [`adapter/${name}`, data] as const,
            ),
          }),
    });
  }

  /** Weights, AdamW moments and step counter (moments left out before the first step: they restore as a fresh optimizer). */
  async saveState(): Promise<Uint8Array> {
    return serializeBuiltinState(await captureBuiltinState(this.model, { optimizer: this.model.step > 0 }));
  }

  /** Frees the model's onnxruntime sessions (transformer-model.ts `release`); a later call makes them again. */
  async release(): Promise<void> {
    await this.model.release();
  }

  async loadState(bytes: Uint8Array): Promise<void> {
    const state = parseBuiltinState(bytes);
    if (JSON.stringify(state.modelConfig) !== JSON.stringify(this.model.config)) {
      throw new CheckpointError('loadState: the state is of a model with another config', {
        state: state.modelConfig,
        model: this.model.config,
      });
    }
    if (JSON.stringify(state.lora?.config ?? null) !== JSON.stringify(this.model.lora)) {
      throw new CheckpointError('loadState: the state is of a model with other LoRA settings', {
        state: state.lora?.config ?? null,
        model: this.model.lora,
      });
    }
    this.model.zeroGradients();
    const trained = state.lora ? state.lora.adapters : state.params;
    if (state.lora) this.model.setAdapters(state.lora.adapters);
    else this.model.setParams(state.params);
    // Under LoRA the trained value head is saved beside the adapters (builtin-state.ts).
    if (state.lora?.valueHead) this.model.setValueHead(state.lora.valueHead);
    this.model.loadOptimizerState(state.optimizer ?? { step: 0, m: zerosLike(trained), v: zerosLike(trained) });
  }
}

function zerosLike(params: HostParams): HostParams {
  return new Map(
    [...params].map(([name, tensor]) => [name, { shape: tensor.shape, data: new Float32Array(tensor.data.length) }]),
  );
}
