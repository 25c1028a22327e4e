/**
 * What a failed request answers, in the two wire shapes agentrl's servers speak — one place that
 * maps an error to its HTTP status and body:
 *
 *   OpenAI (serve-policy, the gateway)   {"error": {"message", "type", "param", "code"}}
 *     RequestError → its status, param and code;  BodyTooLargeError → 413;
 *     RefusedRequestError (foreign Host/Origin, a body not JSON) → 403/415, code in snake case;
 *     InvalidArgumentError → 400 (details.param);  anything else → 500 "server_error"
 *   OpenEnv (serve-env)                  {"detail": …}
 *     BodyTooLargeError → 413;  RefusedRequestError → 403/415 with its `code`;  any other AgentRlError → 400 with its `code`;  anything else → 500
 *
 * Both are Hono `onError` handlers; a handler that fails after its response began streaming ends
 * that stream itself (openai/sse.ts), so these only ever answer a response not yet started.
 */
import { AgentRlError, InvalidArgumentError } from '../core/errors.ts';
import { BodyTooLargeError, errorMessage } from './http.ts';
import { jsonResponse } from './hono-server.ts';
import { RefusedRequestError } from './request-access.ts';

/** A request the OpenAI-shaped servers refuse: its HTTP status, the offending field and OpenAI's error code. */
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

export function openAiErrorBody(
  status: number,
  message: string,
  param: string | null,
  code: string | null,
  type = 'invalid_request_error',
): Response {
  return jsonResponse(status, { error: { message, type, param, code } });
}

export function openAiErrorResponse(error: unknown): Response {
  if (error instanceof RequestError) return openAiErrorBody(error.status, error.message, error.param, error.errorCode);
  if (error instanceof BodyTooLargeError) return openAiErrorBody(413, error.message, null, null);
  if (error instanceof RefusedRequestError)
    return openAiErrorBody(error.status, error.message, null, error.code.toLowerCase());
  if (error instanceof InvalidArgumentError)
    return openAiErrorBody(400, error.message, (error.details.param as string | undefined) ?? null, null);
  return openAiErrorBody(500, errorMessage(error), null, null, 'server_error');
}

export function openEnvErrorResponse(error: unknown): Response {
  if (error instanceof BodyTooLargeError) return jsonResponse(413, { detail: error.message });
  if (error instanceof RefusedRequestError)
    return jsonResponse(error.status, { detail: error.message, code: error.code });
  if (error instanceof AgentRlError) return jsonResponse(400, { detail: error.message, code: error.code });
  return jsonResponse(500, { detail: errorMessage(error) });
}
