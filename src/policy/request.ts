/**
 * Request checks and defaults shared by the policy implementations, and the grouping that lets a
 * batch of requests run as few batched calls as possible.
 */
import { InvalidArgumentError } from '../core/errors.ts';
import { chatStopTokens } from '../chat/chat-template.ts';
import type { Tokenizer } from '../chat/tokenizer.ts';
import type { GenerateRequest, Generation } from './types.ts';

/** A request with every sampling option filled in. */
export interface ResolvedRequest {
  prompt: readonly number[];
  maxNewTokens: number;
  temperature: number;
  topP: number;
  stopTokens: readonly number[];
  stopStrings: readonly string[];
  seed: number;
}

/**
 * Checks a request against the window and the vocabulary (`vocabSize`: the model's, which may be
 * larger than the tokenizer's) and fills in the defaults.
 */
export function resolveRequest(
  request: GenerateRequest,
  tokenizer: Tokenizer,
  contextWindow: number,
  vocabSize = tokenizer.vocabSize,
): ResolvedRequest {
  const { prompt, maxNewTokens } = request;
  if (prompt.length === 0) throw new InvalidArgumentError('a generate request needs a prompt of at least one token id');
  for (const id of prompt) {
    if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
      throw new InvalidArgumentError(`prompt token id ${id} is outside the vocabulary [0, ${vocabSize})`, {
        id,
        vocabSize,
      });
    }
  }
  if (prompt.length >= contextWindow) {
    throw new InvalidArgumentError(
      `a prompt of ${prompt.length} tokens leaves no room in the context window of ${contextWindow}`,
      {
        promptLength: prompt.length,
        contextWindow,
      },
    );
  }
  if (!Number.isInteger(maxNewTokens) || maxNewTokens < 1) {
    throw new InvalidArgumentError(`maxNewTokens must be a positive integer, got ${maxNewTokens}`, { maxNewTokens });
  }
  const temperature = request.temperature ?? 1;
  if (!(temperature >= 0) || !Number.isFinite(temperature)) {
    throw new InvalidArgumentError(`temperature must be a finite number >= 0 (0 = greedy), got ${temperature}`, {
      temperature,
    });
  }
  const topP = request.topP ?? 1;
  if (!(topP > 0 && topP <= 1)) throw new InvalidArgumentError(`topP must be in (0, 1], got ${topP}`, { topP });
  return {
    prompt,
    maxNewTokens,
    temperature,
    topP,
    stopTokens: request.stopTokens ?? chatStopTokens(tokenizer),
    stopStrings: request.stopStrings ?? [],
    seed: request.seed ?? 0,
  };
}

/** Requests with equal sampling options (everything but the prompt) share a key. */
export function samplingKey(request: ResolvedRequest): string {
  const { prompt: _prompt, ...options } = request;
  return JSON.stringify(options);
}

/** Indices of the requests, grouped by sampling options, groups in order of first appearance. */
export function groupBySampling(requests: readonly ResolvedRequest[]): number[][] {
  const groups = new Map<string, number[]>();
  requests.forEach((request, index) => {
    const key = samplingKey(request);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [index]);
    else group.push(index);
  });
  return [...groups.values()];
}

/** `text` of a generation: the decoded ids, without the stop token that ended it. */
export function generationText(
  tokens: readonly number[],
  finishReason: Generation['finishReason'],
  request: ResolvedRequest,
  tokenizer: Tokenizer,
): string {
  const last = tokens[tokens.length - 1];
  const endsWithStopToken = finishReason === 'stop' && last !== undefined && request.stopTokens.includes(last);
  return decodeGenerated(tokenizer, endsWithStopToken ? tokens.slice(0, -1) : tokens);
}

/**
 * Decodes generated ids. A model's vocabulary may be larger than its tokenizer's (the built-in
 * model keeps spare ids 263–271); a sampled spare id has no text and decodes to U+FFFD.
 */
export function decodeGenerated(tokenizer: Tokenizer, ids: readonly number[]): string {
  let text = '';
  let run: number[] = [];
  for (const id of ids) {
    if (id < tokenizer.vocabSize) {
      run.push(id);
      continue;
    }
    text += `${tokenizer.decode(run)}\uFFFD`;
    run = [];
  }
  return text + tokenizer.decode(run);
}
