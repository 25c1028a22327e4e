/**
 * MCP over JSON-RPC 2.0 for an environment's tools (`POST /mcp`, and `{"type":"mcp"}` messages
 * on the WebSocket): `initialize`, `ping`, `tools/list`, `tools/call`.
 *
 *   → {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"2*3"}}}
 *   ← {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"6"}],"structuredContent":{"result":6},"isError":false,"data":6}}
 *
 * `data` is the tool's output as a value (what FastMCP's CallToolResult carries and OpenEnv's
 * MCPToolClient returns); a failed call has none. Which env instance answers (a session's, or a
 * fresh one) is the server's choice (mcp-sessions.ts).
 *
 * A tool call runs the tool only; it is not an episode turn (send the call as a step action for
 * that). Bad arguments or a throwing tool are a result with `isError: true` that names the problem
 * (MCP's convention: the model sees tool errors); an unknown tool or method is a JSON-RPC error.
 */
import { z } from 'zod';
import { runTool } from '../../core/tool.ts';
import type { Tool } from '../../core/types.ts';
import { errorMessage } from '../http.ts';
import { isJsonObject, jsonObjectSchema } from '../../core/json-object.ts';

export const jsonRpcErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  /** JSON-RPC's implementation-defined server error (OpenEnv: capacity reached, env factory failed). */
  serverError: -32000,
} as const;

export const jsonRpcRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z
    .string()
    .describe('initialize, ping, tools/list, tools/call, openenv/session/create, openenv/session/close'),
  params: jsonObjectSchema
    .optional()
    .describe(
      'tools/call: {name, arguments, session_id?}; tools/list: {session_id?}; openenv/session/close: {session_id}',
    ),
  id: z
    .union([z.string(), z.number(), z.null()])
    .optional()
    .describe('none: a notification, answered 202 with no body'),
});

/** A JSON-RPC answer: `result` or `error`. */
export const jsonRpcResponseSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number(), z.null()]),
  result: z.unknown().optional().describe('tools/call: {content, structuredContent, isError, data}'),
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
});

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: string | number | null; result: unknown }
  | { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };

export function jsonRpcError(
  id: string | number | null,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** The tool list in MCP's shape (JSON Schemas from the zod input schemas). */
export function describeTools(tools: readonly Tool[]): { name: string; description: string; inputSchema: unknown }[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.inputSchema, { io: 'input' }),
  }));
}

export interface JsonRpcRequest {
  id: string | number | null;
  method: string;
  params: Record<string, unknown>;
}

/** A request to answer, null for a notification (no `id`), or the error answer to an invalid message. */
export function parseJsonRpc(message: unknown): { request: JsonRpcRequest } | { response: JsonRpcResponse } | null {
  const parsed = jsonRpcRequestSchema.safeParse(message);
  if (!parsed.success) {
    const id =
      isJsonObject(message) && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : null;
    return {
      response: jsonRpcError(id, jsonRpcErrorCodes.invalidRequest, `Invalid request: ${z.prettifyError(parsed.error)}`),
    };
  }
  const { method, params = {}, id } = parsed.data;
  return id === undefined ? null : { request: { id, method, params } };
}

/** The methods that need an env's tools (the others are answered without one). */
export function needsTools(method: string): boolean {
  return method === 'tools/list' || method === 'tools/call';
}

/**
 * Answers one JSON-RPC message (already JSON-parsed) with these tools. Returns null for a
 * notification (no `id`). `serverName` goes into the `initialize` answer. Never throws: a failure
 * while answering is a JSON-RPC internal error.
 */
export async function handleMcp(
  message: unknown,
  tools: readonly Tool[],
  serverName: string,
): Promise<JsonRpcResponse | null> {
  const parsed = parseJsonRpc(message);
  if (parsed === null) return null;
  return 'response' in parsed ? parsed.response : answerMcp(parsed.request, tools, serverName);
}

/** Answers a parsed request (initialize, ping, tools/list, tools/call); never throws. */
export async function answerMcp(
  { id, method, params }: JsonRpcRequest,
  tools: readonly Tool[],
  serverName: string,
): Promise<JsonRpcResponse> {
  try {
    return await answer(id, method, params, tools, serverName);
  } catch (error) {
    return jsonRpcError(id, jsonRpcErrorCodes.internalError, `Internal error: ${errorMessage(error)}`);
  }
}

async function answer(
  id: string | number | null,
  method: string,
  params: Record<string, unknown>,
  tools: readonly Tool[],
  serverName: string,
): Promise<JsonRpcResponse> {
  switch (method) {
    case 'initialize':
      return {
        jsonrpc: '2.0',
        id,
        result: {
          protocolVersion: '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: serverName, version: '0.1.0' },
        },
      };
    case 'ping':
      return { jsonrpc: '2.0', id, result: {} };
    case 'tools/list':
      return { jsonrpc: '2.0', id, result: { tools: describeTools(tools) } };
    case 'tools/call':
      return callTool(id, params, tools);
    default:
      return jsonRpcError(
        id,
        jsonRpcErrorCodes.methodNotFound,
        `Method not found: ${method}; allowed: initialize, ping, tools/list, tools/call, openenv/session/create, openenv/session/close`,
      );
  }
}

async function callTool(
  id: string | number | null,
  params: Record<string, unknown>,
  tools: readonly Tool[],
): Promise<JsonRpcResponse> {
  const name = params.name;
  if (typeof name !== 'string' || name === '')
    return jsonRpcError(id, jsonRpcErrorCodes.invalidParams, "Missing 'name' in params");
  const run = await runTool(tools, { name, arguments: params.arguments ?? {} });
  if (run.ok) return toolResult(id, run.text, run.output, false);
  if (run.kind === 'unknown-tool') return jsonRpcError(id, jsonRpcErrorCodes.invalidParams, run.error);
  return toolResult(id, run.error, undefined, true);
}

function toolResult(id: string | number | null, text: string, output: unknown, isError: boolean): JsonRpcResponse {
  const result: Record<string, unknown> = { content: [{ type: 'text', text }], isError };
  if (output !== undefined) {
    result.structuredContent = { result: output };
    result.data = output;
  }
  return { jsonrpc: '2.0', id, result };
}
