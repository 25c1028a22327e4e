/**
 * Who may use a session. A session the trainer opens (`gatewayCollect`) is named by an id of 128
 * random bits: the id is the capability, known only to the trainer and the agent it is handed to.
 * A session a client opens by naming an id of its own (any string, maybe guessable) belongs to
 * that client through a secret:
 *
 *   - the secret the opening call presented: the header `x-session-secret`, else its API key
 *     (`Authorization: Bearer <key>`, which the `openai` SDK and most clients always send);
 *   - for an opening call that presented neither, a secret of 256 random bits the gateway makes
 *     and answers in the response header `x-session-secret`.
 *
 * Every later call to a client's session must present the same secret (either way); a reward
 * posted to a session that already has one must too. Only the secret's SHA-256 is kept. Clients
 * that share an API key share their sessions: give each agent its own key (any random string).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { RequestError } from '../error-bodies.ts';

export const sessionSecretHeader = 'x-session-secret';

/** The secret a request presents: the `x-session-secret` header, else the bearer token of `Authorization`. */
export function presentedSecret(headers: IncomingHttpHeaders): string | undefined {
  const header = headers[sessionSecretHeader];
  const explicit = Array.isArray(header) ? header[0] : header;
  if (explicit !== undefined && explicit !== '') return explicit;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return bearer?.[1];
}

/** A new secret for a client that opened a session without presenting one. */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}

export function secretHash(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** Whether `presented` is the secret whose hash is `hash` (compared in constant time). */
export function isSessionSecret(hash: Buffer, presented: string | undefined): boolean {
  return presented !== undefined && timingSafeEqual(hash, secretHash(presented));
}

/** A 403 for a request that does not present the secret of the client session it names. */
export function notSessionOwner(id: string, action: string): RequestError {
  return new RequestError(
    403,
    `session '${id}' belongs to the client that opened it; ${action} needs its secret: the API key it was opened with (Authorization: Bearer <key>) or the ${sessionSecretHeader} header the gateway answered its first call with`,
    null,
    'session_not_owned',
  );
}
