/**
 * What both judges share around one request: the content-addressed cache (an identical request in
 * flight is joined, a stored one answered without a request), the per-iteration token budget, the
 * concurrency bound, and the usage counts. `ask(messages, parse)` returns `parse(reply)`; any
 * failure — transport, budget, or `parse` throwing because the reply is not the documented format —
 * is counted and rethrown as a `JudgeError`, never turned into a score.
 */
import { Rng } from '../../core/rng.ts';
import { JudgeCache, judgeCacheKey } from './judge-cache.ts';
import type { JudgeSettings } from './judge-config.ts';
import { JudgeError } from './judge-error.ts';
import { type JudgeMessage, postChatCompletion } from './judge-http.ts';
import { emptyUsage, type JudgeMeter, type JudgeUsage } from './judge-usage.ts';

/** `T`: what the judge reads out of a reply (a score, scores by id); the cache keeps that, not the reply text. */
export interface JudgeClient<T> extends JudgeMeter {
  /** `parse(reply)` for these messages; the same messages always get the same `parse` from one judge. */
  ask(messages: readonly JudgeMessage[], parse: (content: string) => T): Promise<T>;
}

export function createJudgeClient<T>(settings: JudgeSettings): JudgeClient<T> {
  // Parsed values, not reply texts: a hostile endpoint's 1 MB replies cannot fill memory through the cache.
  const cache = new JudgeCache<T>(settings.cacheEntries);
  const pending = new Map<string, Promise<string>>();
  const limit = concurrencyLimit(settings.maxConcurrentCalls);
  const rng = new Rng(settings.seed);
  let usage = emptyUsage();
  const sampling = {
    temperature: settings.temperature,
    max_tokens: settings.maxCompletionTokens,
    ...(settings.responseFormat === 'json_object' ? { response_format: { type: 'json_object' } } : {}),
  };

  const request = (messages: readonly JudgeMessage[]) =>
    limit(async () => {
      const spent = usage.promptTokens + usage.completionTokens;
      if (spent >= settings.maxTokensPerIteration) {
        throw new JudgeError(
          `budget exhausted: ${spent} of maxTokensPerIteration ${settings.maxTokensPerIteration} tokens spent this iteration`,
          { judge: settings.name, reason: 'budget-exhausted', attempts: 0 },
        );
      }
      const counted = usage;
      counted.calls += 1;
      const body = { model: settings.endpoint.model, messages, ...sampling };
      const reply = await postChatCompletion(settings, body, rng);
      counted.promptTokens += reply.promptTokens;
      counted.completionTokens += reply.completionTokens;
      return reply.content;
    });

  const ask = async (messages: readonly JudgeMessage[], parse: (content: string) => T): Promise<T> => {
    const counted = usage;
    try {
      const key = judgeCacheKey({ model: settings.endpoint.model, messages, sampling });
      const stored = cache.get(key);
      if (stored !== undefined) {
        counted.cachedCalls += 1;
        return stored;
      }
      const joined = pending.get(key);
      if (joined !== undefined) {
        const content = await joined;
        counted.cachedCalls += 1;
        return parse(content);
      }
      const inFlight = request(messages); // registered before any await, so a same-tick twin joins it
      pending.set(key, inFlight);
      try {
        const content = await inFlight;
        const value = parse(content);
        cache.set(key, value);
        return value;
      } finally {
        pending.delete(key);
      }
    } catch (error) {
      counted.failures += 1;
      throw error;
    }
  };

  return {
    ask,
    usage: () => ({ ...usage }),
    takeUsage: (): JudgeUsage => {
      const taken = usage;
      usage = emptyUsage();
      return { ...taken };
    },
  };
}

/** Runs at most `slots` tasks at once; the others wait in arrival order. */
function concurrencyLimit(slots: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    running += 1;
    try {
      return await task();
    } finally {
      running -= 1;
      waiting.shift()?.();
    }
  };
}
