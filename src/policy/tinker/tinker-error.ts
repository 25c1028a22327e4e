/**
 * Typed errors of the Tinker backend. A `TinkerError` names the endpoint, the HTTP status (undefined
 * when no answer came) and an excerpt of the body, so a caller can tell a refused request (4xx), a
 * failed future (the server's `error` and `category`) and a server that is down apart.
 */
import { AgentRlError } from '../../core/errors.ts';

export interface TinkerFailure extends Record<string, unknown> {
  /** e.g. `POST /api/v1/forward_backward`. */
  endpoint: string;
  /** HTTP status; undefined when no answer came (timeout, connection refused). */
  status?: number;
  /** The first 500 characters of the answer body (or the failed future's error). */
  body?: string;
  /** Attempts made, retries included. */
  attempts: number;
  /** The future's request id, when the failure is a failed or timed-out future. */
  requestId?: string;
}

export class TinkerError extends AgentRlError {
  declare readonly details: TinkerFailure;
  constructor(message: string, details: TinkerFailure, options?: { cause?: unknown }) {
    super('TINKER', message, details, options);
  }
  get endpoint(): string {
    return this.details.endpoint;
  }
  get status(): number | undefined {
    return this.details.status;
  }
  get body(): string | undefined {
    return this.details.body;
  }
}

/** What the remote trainer cannot compute (a value head, an entropy term); refused before any request. */
export class TinkerUnsupportedError extends AgentRlError {
  constructor(feature: string, message: string) {
    super('TINKER_UNSUPPORTED', message, { feature });
  }
}

const EXCERPT = 500;

export function bodyExcerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > EXCERPT ? `${flat.slice(0, EXCERPT)}…` : flat;
}
