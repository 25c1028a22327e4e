/**
 * A judge could not score: the endpoint failed (HTTP error, timeout, no connection, an answer over
 * the size bound), the iteration's token budget is spent, or the reply is not the documented format
 * (not JSON, a score missing, out of range or not a finite number, an id that names no trajectory).
 * It is thrown, never turned into a 0: `rubric()` reports it as a named failure (`ok: false`) and
 * the trainer leaves the episode (or, for a group judge, the group) out and counts it.
 */
import { AgentRlError } from '../../core/errors.ts';

export const judgeFailureReasons = [
  'http',
  'timeout',
  'network',
  'response-too-large',
  'not-a-completion',
  'budget-exhausted',
  'malformed-reply',
  'out-of-range',
  'missing-score',
  'unknown-id',
] as const;

/** Why a judge call failed: the transport (`http` … `not-a-completion`), the budget, or the reply's content. */
export type JudgeFailureReason = (typeof judgeFailureReasons)[number];

export interface JudgeFailureDetails extends Record<string, unknown> {
  /** The judge's name (its metric key). */
  judge: string;
  reason: JudgeFailureReason;
  /** HTTP status, when the endpoint answered one. */
  status?: number;
  /** Requests sent for this call (retries included); 0 when none was sent. */
  attempts?: number;
  /** An excerpt of the endpoint's body or of the judge's reply (at most 500 characters). */
  excerpt?: string;
}

export class JudgeError extends AgentRlError {
  declare readonly details: JudgeFailureDetails;
  readonly reason: JudgeFailureReason;
  constructor(message: string, details: JudgeFailureDetails, options?: { cause?: unknown }) {
    super('JUDGE', `judge ${details.judge}: ${message}`, details, options);
    this.reason = details.reason;
  }
}

const excerptLength = 500;

/** The first 500 characters of `text`, whitespace collapsed (for error messages and details). */
export function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > excerptLength ? `${flat.slice(0, excerptLength)}…` : flat;
}
