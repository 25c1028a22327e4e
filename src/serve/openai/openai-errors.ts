/**
 * OpenAI-shaped errors for the policy server and the training gateway:
 * `{"error": {"message", "type", "param", "code"}}` with the HTTP status OpenAI would use.
 */
import type { ServerResponse } from 'node:http';
import { AgentRlError, InvalidArgumentError } from '../../core/errors.ts';
import { BodyTooLargeError, errorMessage, sendJson } from '../http.ts';

/** A request the server refuses: its HTTP status, the offending field and OpenAI's error code. */
export class RequestError extends AgentRlError {
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly errorCode: string | null = null,
  ) {
    super('OPENAI_REQUEST', message, { status, param, errorCode });
  }
}

export function sendError(response: ServerResponse, status: number, message: string, param: string | null, code: string | null, type = 'invalid_request_error'): void {
  sendJson(response, status, { error: { message, type, param, code } });
}

/** Answers a failed request: its OpenAI error, or (once a stream has begun) the end of the stream. */
export function respondWithError(response: ServerResponse, error: unknown): void {
  if (response.headersSent) {
    response.end();
    return;
  }
  if (error instanceof RequestError) return sendError(response, error.status, error.message, error.param, error.errorCode);
  if (error instanceof BodyTooLargeError) return sendError(response, 413, error.message, null, null);
  if (error instanceof InvalidArgumentError) return sendError(response, 400, error.message, (error.details.param as string | undefined) ?? null, null);
  sendError(response, 500, errorMessage(error), null, null, 'server_error');
}
