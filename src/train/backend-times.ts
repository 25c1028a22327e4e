/**
 * The time split of a remote backend: a policy that keeps `times` — cumulative wall milliseconds
 * per kind of server call (TinkerPolicy: sample, forward, forwardBackward, optimStep,
 * samplerSync) — gets, per RL iteration, the milliseconds each kind took (`IterationMetrics.backendMs`,
 * recorded as `backendMs/<kind>`). The iteration's wall time minus their sum is agentrl's own work.
 */

/** A policy whose backend reports cumulative milliseconds per kind of call. */
export interface TimedBackend {
  readonly times: Readonly<Record<string, number>>;
}

/** A copy of the policy's cumulative times, or undefined when it keeps none. */
export function backendTimes(policy: object): Record<string, number> | undefined {
  const times = (policy as Partial<TimedBackend>).times;
  if (times === null || typeof times !== 'object') return undefined;
  const copy: Record<string, number> = {};
  for (const [kind, ms] of Object.entries(times)) if (typeof ms === 'number') copy[kind] = ms;
  return copy;
}

/** Milliseconds per kind spent between two `backendTimes` readings. */
export function timesBetween(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): Record<string, number> {
  const spent: Record<string, number> = {};
  for (const [kind, ms] of Object.entries(after)) spent[kind] = ms - (before[kind] ?? 0);
  return spent;
}

/** The recorded metric keys: `backendMs/<kind>`. */
export function backendTimeMetrics(backendMs: Readonly<Record<string, number>> | undefined): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const [kind, ms] of Object.entries(backendMs ?? {})) metrics[`backendMs/${kind}`] = ms;
  return metrics;
}
