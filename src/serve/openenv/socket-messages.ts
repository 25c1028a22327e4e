/**
 * Answering one WebSocket message of an env session:
 *
 *   /ws   → {"type":"reset","data":{…}} {"type":"step","data":{action}} {"type":"state"} {"type":"close"} {"type":"mcp","data":{jsonrpc}}
 *         ← {"type":"observation","data":{observation, reward, done}} {"type":"state","data":{…}}
 *           {"type":"mcp","data":{jsonrpc}} {"type":"error","data":{"message","code"}}
 *   /mcp  JSON-RPC 2.0 messages on the socket's env (mcp-sessions.ts)
 *
 * Whatever throws while answering (a hostile key, a throwing env, a result JSON cannot encode) is
 * an error to that session only.
 */
import type { WebSocket } from 'ws';
import { z } from 'zod';
import { AgentRlError } from '../../core/errors.ts';
import { errorMessage } from '../http.ts';
import { ClientTaskError } from './client-task.ts';
import { jsonRpcError, jsonRpcErrorCodes } from './mcp.ts';
import type { McpSessions } from './mcp-sessions.ts';
import type { EnvSession } from './session.ts';
import {
  actionSchema,
  mcpActionSchema,
  resetRequestSchema,
  stepActionSchema,
  validationDetail,
  type McpAction,
} from './wire.ts';

export type WsErrorCode =
  | 'INVALID_JSON'
  | 'UNKNOWN_TYPE'
  | 'VALIDATION_ERROR'
  | 'EXECUTION_ERROR'
  | 'CAPACITY_REACHED'
  | 'FACTORY_ERROR'
  | 'SESSION_ERROR';

const resetMessageSchema = z.strictObject({ type: z.literal('reset'), data: resetRequestSchema.default({}) });
const stepMessageSchema = z.strictObject({ type: z.literal('step'), data: actionSchema });
const mcpStepMessageSchema = z.strictObject({ type: z.literal('step'), data: mcpActionSchema });
const stateMessageSchema = z.strictObject({ type: z.literal('state') });
const closeMessageSchema = z.strictObject({ type: z.literal('close') });
const mcpMessageSchema = z.strictObject({ type: z.literal('mcp'), data: z.unknown() });
/** A Map, not an object literal: a message type such as "constructor" or "toString" must not find Object.prototype's. */
const messageSchemas = new Map<string, z.ZodType>([
  ['reset', resetMessageSchema],
  ['step', stepMessageSchema],
  ['state', stateMessageSchema],
  ['close', closeMessageSchema],
  ['mcp', mcpMessageSchema],
]);

export function sendWsError(
  ws: WebSocket,
  code: WsErrorCode,
  message: string,
  extra: Record<string, unknown> = {},
): void {
  if (ws.readyState !== ws.OPEN) return;
  ws.send(JSON.stringify({ type: 'error', data: { message, code, ...extra } }));
}

/** Answers one /ws message; whatever throws becomes an error message to this session only. */
export async function answerWsMessage(
  ws: WebSocket,
  session: EnvSession,
  text: string,
  mcpSessions: McpSessions,
): Promise<void> {
  if (ws.readyState !== ws.OPEN) return;
  try {
    await answerMessage(ws, session, text, mcpSessions);
  } catch (error) {
    const code = error instanceof AgentRlError ? { error_code: error.code } : {};
    sendWsError(
      ws,
      error instanceof ClientTaskError ? 'VALIDATION_ERROR' : 'EXECUTION_ERROR',
      errorMessage(error),
      code,
    );
  }
}

async function answerMessage(
  ws: WebSocket,
  session: EnvSession,
  text: string,
  mcpSessions: McpSessions,
): Promise<void> {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    return sendWsError(ws, 'INVALID_JSON', `Invalid JSON: ${errorMessage(error)}`);
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return sendWsError(ws, 'VALIDATION_ERROR', 'a message is a JSON object {"type": ..., "data": ...}');
  }
  const type = (message as { type?: unknown }).type;
  let schema = typeof type === 'string' ? messageSchemas.get(type) : undefined;
  if (schema === undefined)
    return sendWsError(
      ws,
      'UNKNOWN_TYPE',
      `Unknown message type: ${describeType(type)}; types: ${[...messageSchemas.keys()].join(', ')}`,
    );
  if (type === 'step' && stepActionSchema((message as { data?: unknown }).data) !== actionSchema)
    schema = mcpStepMessageSchema;
  const parsed = schema.safeParse(message);
  if (!parsed.success) {
    return sendWsError(ws, 'VALIDATION_ERROR', `invalid ${String(type)} message: ${z.prettifyError(parsed.error)}`, {
      errors: validationDetail(parsed.error, []),
    });
  }
  // A throwing env (e.g. a step after the episode ended) or an answer JSON cannot encode: EXECUTION_ERROR (answerWsMessage).
  const valid = parsed.data as { type: string; data?: unknown };
  if (valid.type === 'reset')
    ws.send(
      JSON.stringify({
        type: 'observation',
        data: await session.reset(valid.data as z.output<typeof resetRequestSchema>),
      }),
    );
  else if (valid.type === 'step')
    ws.send(
      JSON.stringify({
        type: 'observation',
        data: await session.step(valid.data as z.output<typeof actionSchema> | McpAction),
      }),
    );
  else if (valid.type === 'state') ws.send(JSON.stringify({ type: 'state', data: session.state() }));
  else if (valid.type === 'close') ws.close(1000, 'closed by client');
  else {
    const answer = await mcpSessions.handle(valid.data, { session, startsEpisode: false });
    if (answer !== null) ws.send(JSON.stringify({ type: 'mcp', data: answer }));
  }
}

/** Answers one WebSocket /mcp message (JSON-RPC) with the socket's env; never throws but for a closed socket. */
export async function answerMcpMessage(
  ws: WebSocket,
  session: EnvSession,
  text: string,
  mcpSessions: McpSessions,
): Promise<void> {
  if (ws.readyState !== ws.OPEN) return;
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch (error) {
    ws.send(JSON.stringify(jsonRpcError(null, jsonRpcErrorCodes.parseError, `Parse error: ${errorMessage(error)}`)));
    return;
  }
  const answer = await mcpSessions.handle(message, { session, startsEpisode: true });
  if (answer === null) return;
  try {
    ws.send(JSON.stringify(answer));
  } catch (error) {
    const id = 'id' in answer ? answer.id : null;
    ws.send(
      JSON.stringify(jsonRpcError(id, jsonRpcErrorCodes.internalError, `Internal error: ${errorMessage(error)}`)),
    );
  }
}

/** A message's `type` for an error message: a (shortened) string, or the kind of value it is. */
function describeType(type: unknown): string {
  if (typeof type === 'string') return JSON.stringify(type.length > 80 ? `${type.slice(0, 80)}…` : type);
  if (type === undefined) return 'none';
  return `a ${type === null ? 'null' : Array.isArray(type) ? 'array' : typeof type} (a type is a string)`;
}
