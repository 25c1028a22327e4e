/** Reads an env's `observation.data` or `observation.privileged` in a scripted expert, with a clear error when it is missing. */
import { InvalidArgumentError, type Observation } from '../core/index.ts';

export function requireData<Data>(observation: Observation, env: string, field: string): Data {
  return requireField<Data>(
    observation.data,
    `${env} expert needs observation.data.${field} from the ${env} env`,
    field,
  );
}

/**
 * The part of the observation the agent must not see (answers, hidden tests). An env server
 * withholds it; to drive an expert over a remote env, wrap it: `withPrivileged(remote, makeEnv(name, options))`.
 */
export function requirePrivileged<Privileged>(observation: Observation, env: string, field: string): Privileged {
  return requireField<Privileged>(
    observation.privileged,
    `${env} expert needs observation.privileged.${field} from the ${env} env (an env server withholds it: wrap a remote env with withPrivileged(remote, makeEnv('${env}', options)), envs/with-privileged.ts)`,
    field,
  );
}

function requireField<Value>(value: unknown, message: string, field: string): Value {
  if (typeof value !== 'object' || value === null || !(field in value)) throw new InvalidArgumentError(message);
  return value as Value;
}
