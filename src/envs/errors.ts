/** Errors specific to environments (the generic ones live in src/core/errors.ts). */
import { AgentRlError } from '../core/index.ts';

/** A task generator found no acceptable task within its attempt budget (options too tight). */
export class TaskGenerationError extends AgentRlError {
  constructor(env: string, attempts: number, options: object) {
    super('TASK_GENERATION', `${env}: no solvable task in ${attempts} attempts; loosen the options`, { env, attempts, options });
  }
}
