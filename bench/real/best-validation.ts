/**
 * Model selection on the validation split for bench:real: every `every` iterations the policy's
 * sampled success (the rollout temperature, one episode per seed, a fixed sampling seed) on
 * `episodes` validation seeds; the state of the best so far is kept in memory (`saveState`: under
 * LoRA the adapters and moments). The test split is never looked at here — the bench tests the last
 * policy and the selected one only at the end.
 */
import type { Env } from '../../src/core/types.ts';
import type { BuiltinPolicy } from '../../src/policy/builtin-policy.ts';
import { validate } from '../../src/train/rl.ts';

type ValidateConfig = Parameters<typeof validate>[2];

export interface ValidationPoint {
  iteration: number;
  success: number;
  seconds: number;
}

export class BestValidation<Task> {
  readonly points: ValidationPoint[] = [];
  private best: { iteration: number; success: number; state: Uint8Array } | null = null;

  constructor(
    private readonly policy: BuiltinPolicy,
    private readonly env: () => Env<Task>,
    private readonly config: ValidateConfig,
    private readonly every: number,
    private readonly seed = 54_321,
  ) {}

  /** Validates at iteration 0 (the start) and every `every` iterations; returns the point when it ran. */
  async maybeValidate(iteration: number): Promise<ValidationPoint | undefined> {
    if (this.every <= 0 || iteration % this.every !== 0) return undefined;
    const started = performance.now();
    const success = await validate(this.policy, this.env, this.config, 'validation', { samples: 1, seed: this.seed });
    const point = { iteration, success, seconds: (performance.now() - started) / 1000 };
    this.points.push(point);
    if (this.best === null || success > this.best.success)
      this.best = { iteration, success, state: await this.policy.saveState() };
    return point;
  }

  /** The selected iteration and its state (null before the first validation). */
  selected(): { iteration: number; success: number; state: Uint8Array } | null {
    return this.best;
  }
}
