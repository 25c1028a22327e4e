/** Reads an env's `observation.data` in a scripted expert, with a clear error when it is missing. */
import { InvalidArgumentError, type Observation } from '../core/index.ts';

export function requireData<Data>(observation: Observation, env: string, field: string): Data {
  const data = observation.data as Record<string, unknown> | undefined;
  if (data === undefined || data === null || !(field in data)) {
    throw new InvalidArgumentError(`${env} expert needs observation.data.${field} from the ${env} env`);
  }
  return data as Data;
}
