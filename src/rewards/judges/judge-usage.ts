/**
 * What a judge cost, per iteration: calls sent, calls answered from the cache, prompt and
 * completion tokens (the server's `usage`; estimated as characters / 4 when it sends none) and
 * failures. The trainer's hook: once per iteration, `takeJudgeMetrics(rubric)` (or each judge's
 * `takeUsage()`) reads the counts since the last take and resets them — which also refills the
 * judge's `maxTokensPerIteration` budget — and reports them as `judge/<name>/tokens`,
 * `judge/<name>/calls`, `judge/<name>/cached_calls` and `judge/<name>/failures`.
 */
import type { AnyReward } from '../reward.ts';

export interface JudgeUsage {
  /** Requests that reached the endpoint (a call's retries count once). */
  calls: number;
  /** Calls answered from the cache (no request, no tokens). */
  cachedCalls: number;
  promptTokens: number;
  completionTokens: number;
  /** Calls that threw (transport, budget, or a reply that does not parse). */
  failures: number;
}

/** What a judge reward carries besides its score: its cost since the last take. */
export interface JudgeMeter {
  /** The counts of the current iteration so far (since the last `takeUsage()`). */
  usage(): JudgeUsage;
  /** The counts of the current iteration, then resets them and refills the token budget. */
  takeUsage(): JudgeUsage;
}

export function emptyUsage(): JudgeUsage {
  return { calls: 0, cachedCalls: 0, promptTokens: 0, completionTokens: 0, failures: 0 };
}

export function isJudge(candidate: unknown): candidate is JudgeMeter & { readonly name: string } {
  const meter = candidate as Partial<JudgeMeter> | null;
  return (
    (typeof candidate === 'function' || typeof candidate === 'object') &&
    candidate !== null &&
    typeof meter?.takeUsage === 'function' &&
    typeof meter.usage === 'function'
  );
}

/**
 * Reads and resets every judge among `rewards` (a rubric's rewards, or any list): one iteration's
 * metrics, `judge/<name>/tokens` (prompt + completion), `…/calls`, `…/cached_calls`, `…/failures`.
 */
export function takeJudgeMetrics(
  source: { readonly rewards: readonly AnyReward<never>[] } | readonly unknown[],
): Record<string, number> {
  const metrics: Record<string, number> = {};
  const rewards: readonly unknown[] = Array.isArray(source)
    ? source
    : (source as { rewards: readonly unknown[] }).rewards;
  for (const candidate of rewards) {
    if (!isJudge(candidate)) continue;
    const usage = candidate.takeUsage();
    const key = `judge/${candidate.name}`;
    metrics[`${key}/tokens`] = usage.promptTokens + usage.completionTokens;
    metrics[`${key}/calls`] = usage.calls;
    metrics[`${key}/cached_calls`] = usage.cachedCalls;
    metrics[`${key}/failures`] = usage.failures;
  }
  return metrics;
}
