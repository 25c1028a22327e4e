/**
 * What every OpenAI endpoint of a served policy shares: the policy and the batcher over it
 * (policy-generator.ts: the one generation path of serve-policy and the gateway), the chat format
 * (the policy's own when it has one, else agentrl's byte template), its stop ids and tool-call
 * syntax, the model card, and the checks each request goes through (body schema, model name,
 * context window, completion budget).
 */
import { z } from 'zod';
import { agentrlChatFormat, type ChatFormat } from '../../chat/chat-format.ts';
import { byteTokenizer, type Tokenizer } from '../../chat/tokenizer.ts';
import type { Policy } from '../../policy/types.ts';
import { RequestError } from '../error-bodies.ts';
import { readJson, type ServerContext } from '../hono-server.ts';
import { GenerationBatcher, type SharedSampling } from './batcher.ts';
import { policyGenerator } from './policy-generator.ts';
import { stopList } from './protocol.ts';
import {
  charsPerTokenOf,
  completionCap,
  parseRequestLimits,
  type RequestBounds,
  type RequestLimitsInput,
} from './request-limits.ts';
import { toolCallSyntax, type ToolCallSyntax } from './tool-format.ts';

export interface PolicyContextOptions {
  /** What generates the replies (any `Policy`); its tokenizer and context window are the server's. */
  policy: Policy;
  /** The chat protocol prompts are rendered in (src/chat). Default the policy's own (`policy.chatFormat`), else agentrl's byte template over its tokenizer. */
  chatFormat?: ChatFormat;
  /** The id clients pass as `model`. */
  modelName: string;
  /** Milliseconds the batcher waits for more requests. Default 10. */
  batchWindowMs?: number;
  /** Rows per batch at most. Default 64. */
  maxBatchSize?: number;
  onBatch?: (rows: number) => void;
  /** What one request may hold (request-limits.ts: body bytes, messages, tools, rows…); each field has a default. */
  requestLimits?: RequestLimitsInput;
  /**
   * Strings every reply ends after, whatever the request's `stop`; the one reached stays in the
   * reply. The stop strings the policy was trained with (`agentrl train` records them in its
   * checkpoints): a policy whose rollouts always stopped at `</tool_call>` never learned to end its
   * turn there. Default none.
   */
  turnEnds?: readonly string[];
}

export interface PolicyContext {
  readonly policy: Policy;
  readonly tokenizer: Tokenizer;
  readonly chatFormat: ChatFormat;
  /** The ids a reply ends at: the template's turn end first, then the format's other stop ids. */
  readonly stopTokens: readonly number[];
  readonly toolCallSyntax: ToolCallSyntax;
  /** Strings every reply ends after, kept in it (`PolicyContextOptions.turnEnds`). */
  readonly turnEnds: readonly string[];
  readonly modelName: string;
  readonly modelCard: { id: string; object: 'model'; created: number; owned_by: 'agentrl' };
  readonly batcher: GenerationBatcher;
  /** The limits every request is checked against before any rendering (request-limits.ts). */
  readonly bounds: RequestBounds;
  /** Reads a JSON body (at most `bounds.limits.maxBodyBytes`, else 413) and parses it (400 naming the field when it does not fit); the model name is not checked. */
  readBody<Schema extends z.ZodType>(c: ServerContext, schema: Schema): Promise<z.output<Schema>>;
  /** 404 model_not_found unless `model` is the served one. */
  checkModel(model: string): void;
  /** Checks the prompt against the vocabulary and the window; returns the completion budget. */
  budget(prompt: readonly number[], requested: number | null | undefined): number;
  /** The request's sampling; its stop strings are the client's and the turn ends, which generation stops at. */
  sampling(request: {
    temperature?: number | null;
    top_p?: number | null;
    stop?: string | string[] | null;
    seed?: number | null;
  }): SharedSampling;
}

export function createPolicyContext(options: PolicyContextOptions): PolicyContext {
  const { policy, modelName, turnEnds = [] } = options;
  const { contextWindow } = policy;
  const chatFormat = options.chatFormat ?? policy.chatFormat ?? agentrlChatFormat(policy.tokenizer);
  const limits = parseRequestLimits(options.requestLimits);
  const bounds: RequestBounds = {
    limits,
    contextWindow,
    maxCompletionTokens: completionCap(limits, contextWindow),
    charsPerToken: charsPerTokenOf(chatFormat.tokenizer, {
      exact: chatFormat.name === 'agentrl' && chatFormat.tokenizer === byteTokenizer,
    }),
  };
  const closing = chatFormat.turnEnd[0];
  const stopTokens =
    closing === undefined
      ? [...chatFormat.stopTokens]
      : [closing, ...chatFormat.stopTokens.filter((id) => id !== closing)];
  const batcher = new GenerationBatcher({
    generate: policyGenerator(policy),
    windowMs: options.batchWindowMs,
    maxBatchSize: options.maxBatchSize,
    onBatch: options.onBatch,
  });
  return {
    policy,
    tokenizer: chatFormat.tokenizer,
    chatFormat,
    stopTokens,
    toolCallSyntax: toolCallSyntax(chatFormat),
    turnEnds,
    modelName,
    modelCard: { id: modelName, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'agentrl' },
    batcher,
    bounds,
    async readBody(c, schema) {
      const body = await readJson(c, undefined, bounds.limits.maxBodyBytes);
      if (!body.ok) throw new RequestError(400, body.message);
      const parsed = schema.safeParse(body.value);
      if (!parsed.success)
        throw new RequestError(400, z.prettifyError(parsed.error), parsed.error.issues[0]?.path.join('.') || null);
      return parsed.data;
    },
    checkModel(model) {
      if (model !== modelName)
        throw new RequestError(
          404,
          `The model '${model}' does not exist; this server serves '${modelName}'`,
          'model',
          'model_not_found',
        );
    },
    budget(prompt, requested) {
      for (const id of prompt) {
        if (id >= chatFormat.tokenizer.vocabSize)
          throw new RequestError(
            400,
            `prompt token id ${id} is outside the vocabulary [0, ${chatFormat.tokenizer.vocabSize})`,
            'prompt',
          );
      }
      const room = contextWindow - prompt.length;
      if (room < 1)
        throw new RequestError(
          400,
          `the prompt has ${prompt.length} tokens; the context window is ${contextWindow}`,
          'messages',
          'context_length_exceeded',
        );
      return Math.min(requested ?? room, room, bounds.maxCompletionTokens);
    },
    sampling: (request) => ({
      temperature: request.temperature ?? 1,
      topP: request.top_p ?? 1,
      stopTokens,
      stopStrings: [...stopList(request.stop), ...turnEnds],
      seed: request.seed ?? null,
    }),
  };
}
