/**
 * One environment instance and its episode bookkeeping (OpenEnv `State`: episode id, step count),
 * shared by the WebSocket sessions and the stateless HTTP calls of the env server.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Env } from '../../core/types.ts';
import { serializeReset, serializeStep, toWireAction, type ResetRequest, type WireAction, type WireResult } from './wire.ts';

export class EnvSession {
  readonly env: Env;
  private episodeId: string | null = null;
  private seed: number | null = null;
  private stepCount = 0;
  private over = false;

  constructor(env: Env) {
    this.env = env;
  }

  /** Starts an episode; without a seed the server draws one (reported by `state()`). */
  async reset(request: ResetRequest): Promise<WireResult> {
    const seed = request.seed ?? randomInt(2 ** 31);
    const observation = await this.env.reset(request.task === undefined ? { seed } : { seed, task: request.task });
    this.episodeId = request.episode_id ?? randomUUID();
    this.seed = seed;
    this.stepCount = 0;
    this.over = false;
    return serializeReset(observation);
  }

  async step(action: WireAction): Promise<WireResult> {
    const result = await this.env.step(toWireAction(action));
    this.stepCount++;
    this.over = result.done || result.truncated;
    return serializeStep(result);
  }

  state(): Record<string, unknown> {
    return { episode_id: this.episodeId, step_count: this.stepCount, seed: this.seed, done: this.over, env: this.env.name };
  }
}
