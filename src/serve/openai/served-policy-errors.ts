/** Typed errors of the OpenAI endpoints' generation path (the batcher and the policy they run). */
import { AgentRlError } from '../../core/errors.ts';

/** The served policy broke its contract (its streamed ids are not the ids it returned). */
export class ServedPolicyError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('SERVED_POLICY', message, details);
  }
}

/**
 * A generation nobody waits for any more: its client left (disconnected, or the server closed)
 * before its batch began, or every row of its running batch lost its client — the batch is
 * stopped at its next sampled id instead of running on for nobody.
 */
export class GenerationAbandonedError extends AgentRlError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('GENERATION_ABANDONED', message, details);
  }
}
