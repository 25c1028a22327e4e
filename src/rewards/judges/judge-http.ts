/**
 * One judge call over HTTP: POST `${baseURL}/chat/completions` (the OpenAI chat-completions shape)
 * with bounded attempts. A 408, 409, 429 or 5xx answer, a timeout and a network error are retried
 * after an exponential backoff with jitter, `delay = b/2 + u·b/2` with `b = min(maxRetryDelayMs,
 * retryDelayMs·2^(attempt−1))` and `u` from the judge's seeded RNG ("equal jitter", AWS Architecture
 * Blog, "Exponential Backoff And Jitter", 2015); a `Retry-After` header (seconds or an HTTP date)
 * replaces that delay, capped at `maxRetryDelayMs`. Any other status (400, 401, 404, …) fails at
 * once, a redirect included: it is not followed (the key is not carried to another address). The body is read up to `maxResponseBytes` (decoded bytes, so a compressed bomb is cut too)
 * within the same `timeoutMs` as the headers.
 *
 * The rewards layer depends on `core` only (DESIGN.md), so this is not src/policy/openai-http.ts:
 * that one has no jitter, no body bound and throws the policy's error type.
 */
import { z } from 'zod';
import type { Rng } from '../../core/rng.ts';
import type { JudgeSettings } from './judge-config.ts';
import { excerpt, JudgeError, type JudgeFailureReason } from './judge-error.ts';

export interface JudgeMessage {
  role: 'system' | 'user';
  content: string;
}

export interface JudgeReply {
  content: string;
  promptTokens: number;
  completionTokens: number;
  /** True when the server sent no `usage`: the tokens are estimated as characters / 4. */
  estimatedUsage: boolean;
}

type Transport = Pick<
  JudgeSettings,
  'name' | 'endpoint' | 'timeoutMs' | 'maxAttempts' | 'retryDelayMs' | 'maxRetryDelayMs' | 'maxResponseBytes'
>;

const completionSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullish() }) })).min(1),
  usage: z.object({ prompt_tokens: z.number().min(0), completion_tokens: z.number().min(0) }).nullish(),
});

/** Sends `body` (a chat-completions request) and returns the first choice's text and the tokens it cost. */
export async function postChatCompletion(
  settings: Transport,
  body: { messages: readonly JudgeMessage[] } & Record<string, unknown>,
  rng: Rng,
): Promise<JudgeReply> {
  const url = `${settings.endpoint.baseURL.replace(/\/+$/, '')}/chat/completions`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (settings.endpoint.apiKey !== undefined) headers.authorization = `Bearer ${settings.endpoint.apiKey}`;
  const payload = JSON.stringify(body);
  for (let attempt = 1; ; attempt++) {
    const outcome = await attemptOnce(url, headers, payload, settings, attempt);
    if ('content' in outcome) return withUsage(outcome, body.messages);
    if (!outcome.retry || attempt >= settings.maxAttempts) throw outcome.error;
    const backoff = Math.min(settings.maxRetryDelayMs, settings.retryDelayMs * 2 ** (attempt - 1));
    const jittered = backoff / 2 + rng.next() * (backoff / 2);
    const delay = Math.min(settings.maxRetryDelayMs, outcome.retryAfterMs ?? jittered);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

type Attempt =
  | { content: string; usage?: { prompt_tokens: number; completion_tokens: number } | null }
  | { error: JudgeError; retry: boolean; retryAfterMs?: number };

async function attemptOnce(
  url: string,
  headers: Record<string, string>,
  payload: string,
  settings: Transport,
  attempt: number,
): Promise<Attempt> {
  const fail = (reason: JudgeFailureReason, message: string, extra: { status?: number; excerpt?: string } = {}) =>
    new JudgeError(`POST ${url}: ${message} (attempt ${attempt} of ${settings.maxAttempts})`, {
      judge: settings.name,
      reason,
      attempts: attempt,
      ...extra,
    });
  const signal = AbortSignal.timeout(settings.timeoutMs);
  try {
    const response = await fetch(url, { method: 'POST', headers, body: payload, signal, redirect: 'manual' });
    const text = await readBounded(response, settings.maxResponseBytes);
    if (text === undefined) {
      const error = fail('response-too-large', `the answer is over ${settings.maxResponseBytes} bytes`, {
        status: response.status,
      });
      return { error, retry: false };
    }
    if (!response.ok) {
      const error = fail('http', `HTTP ${response.status} ${response.statusText}: ${excerpt(text)}`, {
        status: response.status,
        excerpt: excerpt(text),
      });
      const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
      return { error, retry: isRetryable(response.status), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    }
    return readCompletion(text, (message) => fail('not-a-completion', message, { excerpt: excerpt(text) }));
  } catch (error) {
    const timedOut = error instanceof DOMException && (error.name === 'TimeoutError' || error.name === 'AbortError');
    const failure = timedOut
      ? fail('timeout', `no complete answer within ${settings.timeoutMs} ms`)
      : fail('network', `request failed (${describe(error)})`);
    return { error: failure, retry: true };
  }
}

function readCompletion(text: string, fail: (message: string) => JudgeError): Attempt {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: fail('HTTP 200 but the body is not JSON'), retry: false };
  }
  const parsed = completionSchema.safeParse(json);
  if (!parsed.success)
    return { error: fail(`HTTP 200 but not a chat completion: ${parsed.error.issues[0]?.message}`), retry: false };
  const [choice] = parsed.data.choices;
  return { content: choice?.message.content ?? '', usage: parsed.data.usage };
}

function withUsage(
  outcome: { content: string; usage?: { prompt_tokens: number; completion_tokens: number } | null },
  messages: readonly JudgeMessage[],
): JudgeReply {
  if (outcome.usage != null) {
    const { prompt_tokens: promptTokens, completion_tokens: completionTokens } = outcome.usage;
    return { content: outcome.content, promptTokens, completionTokens, estimatedUsage: false };
  }
  const promptChars = messages.reduce((sum, message) => sum + message.content.length, 0);
  return {
    content: outcome.content,
    promptTokens: Math.ceil(promptChars / 4),
    completionTokens: Math.ceil(outcome.content.length / 4),
    estimatedUsage: true,
  };
}

function isRetryable(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** `Retry-After` as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The body as text, or undefined when it is longer than `maxBytes` (the rest is not read). */
async function readBounded(response: Response, maxBytes: number): Promise<string | undefined> {
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await response.body?.cancel();
    return undefined;
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? error.message;
}
