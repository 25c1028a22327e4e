/**
 * The time split of an RL iteration on the built-in policy: a view of the policy that adds up the
 * wall milliseconds of its calls per phase — generation (`generate`, `generateBatch`), scoring
 * (`logprobs`, `values`), training (`forwardBackward`, `optimStep`, `trainStep`). It exposes them
 * as `times`, which runRl reads each iteration (train/backend-times.ts → `IterationMetrics.backendMs`);
 * the iteration's wall time minus their sum is everything else (envs, rendering, advantages).
 */
import type { TimedBackend } from '../../src/train/backend-times.ts';

const phaseOfMethod: Record<string, 'generation' | 'scoring' | 'training'> = {
  generate: 'generation',
  generateBatch: 'generation',
  logprobs: 'scoring',
  values: 'scoring',
  forwardBackward: 'training',
  optimStep: 'training',
  trainStep: 'training',
};

export function withPhaseTimes<P extends object>(policy: P): P & TimedBackend {
  const times: Record<string, number> = { generation: 0, scoring: 0, training: 0 };
  return new Proxy(policy, {
    get(target, key) {
      if (key === 'times') return times;
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      const phase = typeof key === 'string' ? phaseOfMethod[key] : undefined;
      if (phase === undefined) return value.bind(target);
      return async (...args: unknown[]) => {
        const started = performance.now();
        try {
          return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        } finally {
          times[phase] = (times[phase] ?? 0) + performance.now() - started;
        }
      };
    },
  }) as P & TimedBackend;
}
