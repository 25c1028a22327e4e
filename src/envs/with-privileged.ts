/**
 * An env played elsewhere, with `observation.privileged` restored from a local copy. An env
 * server (`agentrl serve-env`) never sends the privileged part (the answer, hidden tests, the
 * other side's values), so a scripted expert cannot act on a `RemoteEnv`'s observations alone.
 * The copy, made here with the same name and options, follows the episode — the same seed and
 * task at `reset`, the same actions at `step` — and lends each observation its privileged part
 * (a seed and the actions replay an episode exactly, DESIGN.md "Contracts").
 *
 *   const pool = await RemoteEnvPool.connect(urls);
 *   const env = () => withPrivileged(pool.makeEnv(), makeEnv('code', options));   // for warm start, demonstrations
 *
 * The copy does the env's work a second time, in this process (a code or swe answer runs in a
 * local sandbox too). A copy whose first observation differs from the env's (other options,
 * another version) is refused with `PrivilegedCopyMismatchError`; a step that depends on timing
 * (a sandbox timeout on a loaded machine) can still differ between the two. The env server does
 * not send the env's `rewardComponents` spec (each step's `info.rewardComponents` does travel):
 * the wrapped env declares the copy's when the env has none.
 */
import { InvalidArgumentError, type Action, type Env, type Observation, type StepResult } from '../core/index.ts';
import { PrivilegedCopyMismatchError } from './errors.ts';

export function withPrivileged(env: Env, copy: Env): Env {
  if (copy.name !== env.name) {
    throw new InvalidArgumentError(
      `withPrivileged: the local copy is a ${copy.name} env but the env is ${env.name}; make it with makeEnv('${env.name}', options)`,
      { env: env.name, copy: copy.name },
    );
  }
  const rewardComponents = env.rewardComponents ?? copy.rewardComponents;
  const lend = (observation: Observation, fromCopy: Observation): Observation =>
    fromCopy.privileged === undefined ? observation : { ...observation, privileged: fromCopy.privileged };
  return {
    name: env.name,
    ...(env.instructions === undefined ? {} : { instructions: env.instructions }),
    ...(rewardComponents === undefined ? {} : { rewardComponents }),
    get tools() {
      return env.tools;
    },
    async reset(options: { seed: number; task?: unknown }): Promise<Observation> {
      const [observation, fromCopy] = await Promise.all([env.reset(options), copy.reset(options)]);
      if (fromCopy.text !== observation.text)
        throw new PrivilegedCopyMismatchError(env.name, options.seed, observation.text, fromCopy.text);
      return lend(observation, fromCopy);
    },
    async step(action: Action): Promise<StepResult> {
      const [result, fromCopy] = await Promise.all([env.step(action), copy.step(action)]);
      return { ...result, observation: lend(result.observation, fromCopy.observation) };
    },
    async close(): Promise<void> {
      await Promise.all([env.close?.(), copy.close?.()]);
    },
  };
}
