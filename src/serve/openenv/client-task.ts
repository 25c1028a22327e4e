/**
 * A client's `task` on reset (HTTP `/reset`, the WebSocket `reset`, MCP `openenv/session/create`)
 * is untrusted input that picks the work the server does (a code task's tests all run in the
 * sandbox). It is checked against the env's own `taskSchema` (sizes bounded, e.g. the code env's
 * `maxTests`); an env without a schema gets no client task at all unless the server was started
 * with `allowClientTasks` (`agentrl serve-env --allow-client-tasks`), which passes it unchecked.
 */
import { z } from 'zod';
import { AgentRlError } from '../../core/errors.ts';
import type { Env } from '../../core/types.ts';

/** A client's task the server refuses: invalid for the env's `taskSchema`, or client tasks are off for this env. */
export class ClientTaskError extends AgentRlError {
  constructor(message: string, details: { env: string } & Record<string, unknown>) {
    super('CLIENT_TASK_REFUSED', message, details);
  }
}

/** The task to pass to `env.reset`: `task` as the env's schema parses it, or unchecked where allowed; else a `ClientTaskError`. */
export function checkClientTask(env: Env, task: unknown, allowUnchecked: boolean): unknown {
  if (env.taskSchema === undefined) {
    if (allowUnchecked) return task;
    throw new ClientTaskError(
      `the env ${env.name} declares no task schema, so this server takes no task from a client; ` +
        'reset with a seed only, or start the server with --allow-client-tasks (allowClientTasks) to pass tasks unchecked',
      { env: env.name },
    );
  }
  const parsed = env.taskSchema.safeParse(task);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 10);
    throw new ClientTaskError(`invalid task for ${env.name}: ${z.prettifyError(parsed.error).slice(0, 1000)}`, {
      env: env.name,
      issues: issues.map(({ path, message }) => ({ path: path.map(String), message })),
    });
  }
  return parsed.data;
}
