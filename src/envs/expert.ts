/**
 * The scripted expert interface. A rollout calls `expert.act(observation)` each turn; the expert
 * reads the env's structured `observation.data` and, where it needs the answer, the
 * `observation.privileged` part the agent never sees (a served env withholds it:
 * with-privileged.ts), and returns the full action text the model should produce (e.g.
 * `<answer>Right</answer>`). With `randomActionRate` > 0 it replaces that
 * fraction of turns by a random valid action (imperfect demonstrations for SFT).
 */
import { z } from 'zod';
import { Rng, type Observation } from '../core/index.ts';
import { parseOptions } from './options.ts';

export interface Expert {
  act(observation: Observation): string;
}

export const expertOptionsSchema = z.strictObject({
  /** Seed of the expert's own random choices. */
  seed: z.number().int().nonnegative().default(0),
  /** Fraction of turns where the expert plays a random valid action instead of the best one. */
  randomActionRate: z.number().min(0).max(1).default(0),
});
export type ExpertOptions = z.input<typeof expertOptionsSchema>;

/** Builds an expert from a best-action and a random-action function over observations. */
export function makeExpert(
  options: ExpertOptions | undefined,
  best: (observation: Observation, rng: Rng) => string,
  random: (observation: Observation, rng: Rng) => string,
): Expert {
  const { seed, randomActionRate } = parseOptions(expertOptionsSchema, options, 'expert');
  const rng = new Rng(seed);
  return {
    act(observation) {
      const explore = randomActionRate > 0 && rng.next() < randomActionRate;
      return explore ? random(observation, rng) : best(observation, rng);
    },
  };
}
