/**
 * The settings every judge shares (pointwise and group), as one zod schema: where the judge model
 * is (any OpenAI-compatible `/chat/completions`: agentrl's `serve-policy`, vLLM, SGLang, Ollama,
 * llama.cpp, a hosted API), how it samples, how hard to retry, and the bounds that keep a judge's
 * cost and a hostile endpoint in check. Each field has its default and its doc; a bad value is an
 * `InvalidArgumentError` naming the field.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../core/errors.ts';
import { checkRewardName } from '../reward.ts';

export const judgeEndpointSchema = z.strictObject({
  baseURL: z
    .string()
    .regex(/^https?:\/\/[^\s/]+/, 'an http(s) URL')
    .describe("the server's API root, e.g. http://127.0.0.1:8001/v1; requests go to <baseURL>/chat/completions"),
  apiKey: z
    .string()
    .optional()
    .describe('sent as `Authorization: Bearer <apiKey>`; default none (agentrl serve-policy needs none)'),
  model: z.string().min(1).describe('the `model` field of every request (the judge model)'),
});
export type JudgeEndpoint = z.infer<typeof judgeEndpointSchema>;

export const judgeSettingsSchema = z.strictObject({
  name: z
    .string()
    .refine(isRewardName, 'use 1–64 characters of a-z, 0-9, _ or -, starting with a letter')
    .describe('the reward name: its metric key (`reward/<name>`, `judge/<name>/tokens`)'),
  endpoint: judgeEndpointSchema.describe('where the judge model is served'),
  temperature: z.number().min(0).max(2).default(0).describe('sampling temperature of the judge; default 0'),
  maxCompletionTokens: z
    .number()
    .int()
    .positive()
    .default(512)
    .describe('`max_tokens` of each judge reply; default 512'),
  responseFormat: z
    .enum(['text', 'json_object'])
    .default('text')
    .describe(
      "'json_object' sends `response_format: {type: 'json_object'}` (hosted APIs, vLLM); default 'text' (serve-policy refuses json_object)",
    ),
  timeoutMs: z.number().int().positive().default(60_000).describe('per request, the reply body included; default 60 s'),
  maxAttempts: z
    .number()
    .int()
    .min(1)
    .max(10)
    .default(4)
    .describe('requests per call at most, the first included (408, 409, 429, 5xx, timeouts, network errors retry)'),
  retryDelayMs: z.number().min(0).default(500).describe('first backoff delay; doubled each retry, with jitter'),
  maxRetryDelayMs: z.number().min(0).default(20_000).describe('longest wait between attempts, Retry-After included'),
  maxTokensPerIteration: z
    .number()
    .int()
    .positive()
    .default(500_000)
    .describe('prompt + completion tokens (from `usage`) per iteration; past it calls fail as budget-exhausted'),
  maxConcurrentCalls: z.number().int().positive().default(4).describe('judge requests in flight at once'),
  cacheEntries: z
    .number()
    .int()
    .min(0)
    .default(4096)
    .describe('judged replies kept (LRU, by SHA-256 of model, messages and sampling); 0 = no cache'),
  maxResponseBytes: z
    .number()
    .int()
    .positive()
    .default(1024 * 1024)
    .describe('reply body bytes at most; a longer body fails as response-too-large'),
  maxCharsPerMessage: z
    .number()
    .int()
    .min(64)
    .default(2_000)
    .describe('characters per task, action or observation shown to the judge; longer ones are cut in the middle'),
  maxCharsPerEpisode: z
    .number()
    .int()
    .min(256)
    .default(12_000)
    .describe("characters of one episode's turns shown to the judge; middle turns are dropped past it"),
  seed: z.number().int().default(0).describe('seeds the retry jitter and the group shuffle'),
});
export type JudgeSettings = z.infer<typeof judgeSettingsSchema>;
export type JudgeSettingsInput = z.input<typeof judgeSettingsSchema>;

function isRewardName(name: string): boolean {
  try {
    checkRewardName(name);
    return true;
  } catch {
    return false;
  }
}

/** Checks `input` against `schema`; the error names the judge and every bad field. */
export function parseJudgeSettings<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) {
    const name = (input as { name?: unknown } | undefined)?.name;
    throw new InvalidArgumentError(`${what} ${JSON.stringify(name ?? '?')}: ${z.prettifyError(parsed.error)}`);
  }
  return parsed.data;
}
