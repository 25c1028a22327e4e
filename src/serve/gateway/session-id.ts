/**
 * Which session a gateway call belongs to, read from the request in this order:
 *
 *   1. the `x-session-id` header (AI SDK: `createOpenAICompatible({ headers })`, openai SDK: `defaultHeaders`);
 *   2. the model name `agentrl/<session>` (for clients that can set only the model);
 *   3. the `user` field (OpenAI's end-user id).
 *
 * A session id is 1–200 visible ASCII characters.
 */
import type { IncomingHttpHeaders } from 'node:http';

export const sessionHeader = 'x-session-id';
export const sessionModelPrefix = 'agentrl/';

const validId = /^[\x21-\x7e]{1,200}$/;

export type SessionIdResult = { ok: true; id: string } | { ok: false; message: string; param: string | null };

export function sessionIdOf(
  headers: IncomingHttpHeaders,
  body: { model: string; user?: string | null },
): SessionIdResult {
  const header = headers[sessionHeader];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  const candidates: Array<[string | undefined, string | null]> = [
    [fromHeader, null],
    [body.model.startsWith(sessionModelPrefix) ? body.model.slice(sessionModelPrefix.length) : undefined, 'model'],
    [typeof body.user === 'string' && body.user !== '' ? body.user : undefined, 'user'],
  ];
  for (const [id, param] of candidates) {
    if (id === undefined) continue;
    if (!validId.test(id))
      return {
        ok: false,
        message: `the session id ${JSON.stringify(id.slice(0, 80))} is not 1–200 visible ASCII characters`,
        param,
      };
    return { ok: true, id };
  }
  return {
    ok: false,
    param: null,
    message: `the gateway records calls per session and this call names none: send the header '${sessionHeader}: <session>', or model '${sessionModelPrefix}<session>', or user '<session>'`,
  };
}
