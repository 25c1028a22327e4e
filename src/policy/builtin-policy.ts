/**
 * `BuiltinPolicy`: the built-in transformer as a `TrainablePolicy`.
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
 * `logprobs({ sequences, temperature })` with the sampling temperature reproduces them.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import type { TokenLoss } from '../core/loss.ts';
import { saveCheckpoint } from '../model/checkpoint.ts';
import { generate } from '../model/generate.ts';
import type { TransformerModel } from '../model/model.ts';
import { byteTokenizer, type Tokenizer } from '../model/tokenizer.ts';
import { decodeGenerated, generationText, groupBySampling, resolveRequest } from './request.ts';
import type { GenerateRequest, Generation, LossReport, OptimOptions, OptimReport, TokenBatch, TrainablePolicy } from './types.ts';

export interface BuiltinPolicyOptions {
  model: TransformerModel;
  /** Default: the built-in byte tokenizer. Its ids must fit the model's vocabulary. */
  tokenizer?: Tokenizer;
}

export class BuiltinPolicy implements TrainablePolicy {
  readonly model: TransformerModel;
  readonly tokenizer: Tokenizer;
  readonly contextWindow: number;

  constructor({ model, tokenizer = byteTokenizer }: BuiltinPolicyOptions) {
    if (tokenizer.vocabSize > model.config.vocabSize) {
      throw new InvalidArgumentError(`tokenizer has ${tokenizer.vocabSize} ids but the model's vocabSize is ${model.config.vocabSize}`, {
        tokenizerVocabSize: tokenizer.vocabSize,
        vocabSize: model.config.vocabSize,
      });
    }
    this.model = model;
    this.tokenizer = tokenizer;
    this.contextWindow = model.config.maxSeqLen;
  }

  async generate(request: GenerateRequest): Promise<Generation> {
    const [generation] = await this.generateBatch([request]);
    return generation!;
  }

  async generateBatch(requests: readonly GenerateRequest[]): Promise<Generation[]> {
    const resolved = requests.map((request) => resolveRequest(request, this.tokenizer, this.contextWindow, this.model.config.vocabSize));
    const results = new Array<Generation>(requests.length);
    const decode = (ids: readonly number[]): string => decodeGenerated(this.tokenizer, ids);
    for (const group of groupBySampling(resolved)) {
      const options = resolved[group[0]!]!;
      const rows = await generate(
        this.model,
        group.map((index) => resolved[index]!.prompt),
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
        },
      );
      rows.forEach((row, i) => {
        results[group[i]!] = {
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
    const scored = await this.model.score(batch.sequences, { temperature: batch.temperature ?? 1 });
    return scored.logprobs;
  }

  async forwardBackward(batch: TokenBatch, loss: TokenLoss): Promise<LossReport> {
    if ((batch.temperature ?? 1) !== 1) {
      throw new InvalidArgumentError(`forwardBackward trains at temperature 1; got temperature ${batch.temperature}`, {
        temperature: batch.temperature,
      });
    }
    return this.model.forwardBackward(batch.sequences, loss);
  }

  async optimStep(options: OptimOptions): Promise<OptimReport> {
    return this.model.optimStep(options);
  }

  async save(path: string): Promise<void> {
    await saveCheckpoint(path, { config: this.model.config, params: await this.model.hostParams(), tokenizer: this.tokenizer });
  }
}
