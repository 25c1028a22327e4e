/**
 * MCP over JSON-RPC 2.0 for an environment's tools (`POST /mcp`, and `{"type":"mcp"}` messages
 * on the WebSocket): `initialize`, `ping`, `tools/list`, `tools/call`.
 *
 *   → {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"calculator","arguments":{"expression":"2*3"}}}
 *   ← {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"6"}],"structuredContent":{"result":6},"isError":false}}
 *
 * A tool call runs the tool only; it is not an episode turn (send the call as a step action for
 * that). Bad arguments or a throwing tool are a result with `isError: true` that names the problem
 * (MCP's convention: the model sees tool errors); an unknown tool or method is a JSON-RPC error.
 */
import { z } from 'zod';
import type { Tool } from '../../core/types.ts';
import { errorMessage } from '../http.ts';
import { isJsonObject, jsonObjectSchema } from '../../core/json-object.ts';

export const jsonRpcErrorCodes = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

const requestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.string(),
  params: jsonObjectSchema.optional(),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
});

export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: string | number | null; result: unknown }
  | { jsonrpc: '2.0'; id: string | number | null; error: { code: number; message: string; data?: unknown } };

export function jsonRpcError(id: string | number | null, code: number, message: string, data?: unknown): JsonRpcResponse {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** The tool list in MCP's shape (JSON Schemas from the zod input schemas). */
export function describeTools(tools: readonly Tool[]): { name: string; description: string; inputSchema: unknown }[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: z.toJSONSchema(tool.inputSchema, { io: 'input' }) }));
}

/**
 * Answers one JSON-RPC message (already JSON-parsed). Returns null for a notification (no `id`).
 * `serverName` goes into the `initialize` answer. Never throws: a failure while answering is a
 * JSON-RPC internal error.
 */
export async function handleMcp(message: unknown, tools: readonly Tool[], serverName: string): Promise<JsonRpcResponse | null> {
  const parsed = requestSchema.safeParse(message);
  if (!parsed.success) {
    const id = isJsonObject(message) && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : null;
    return jsonRpcError(id, jsonRpcErrorCodes.invalidRequest, `Invalid request: ${z.prettifyError(parsed.error)}`);
  }
  const { method, params = {}, id } = parsed.data;
  if (id === undefined) return null;
  try {
    return await answer(id, method, params, tools, serverName);
  } catch (error) {
    return jsonRpcError(id, jsonRpcErrorCodes.internalError, `Internal error: ${errorMessage(error)}`);
  }
}

async function answer(id: string | number | null, method: string, params: Record<string, unknown>, tools: readonly Tool[], serverName: string): Promise<JsonRpcResponse> {
  switch (method) {
    case 'initialize':
      return {
        jsonrpc: '2.0',
        id,
        result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: serverName, version: '0.1.0' } },
      };
    case 'ping':
      return { jsonrpc: '2.0', id, result: {} };
    case 'tools/list':
      return { jsonrpc: '2.0', id, result: { tools: describeTools(tools) } };
    case 'tools/call':
      return callTool(id, params, tools);
    default:
      return jsonRpcError(id, jsonRpcErrorCodes.methodNotFound, `Method not found: ${method}; allowed: initialize, ping, tools/list, tools/call`);
  }
}

async function callTool(id: string | number | null, params: Record<string, unknown>, tools: readonly Tool[]): Promise<JsonRpcResponse> {
  const name = params.name;
  if (typeof name !== 'string' || name === '') return jsonRpcError(id, jsonRpcErrorCodes.invalidParams, "Missing 'name' in params");
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) {
    const allowed = tools.map((candidate) => candidate.name).join(', ') || '(none)';
    return jsonRpcError(id, jsonRpcErrorCodes.invalidParams, `Tool not found: ${name}; tools: ${allowed}`);
  }
  try {
    const input = tool.inputSchema.safeParse(params.arguments ?? {});
    if (!input.success) return toolResult(id, `invalid arguments for ${name}: ${z.prettifyError(input.error)}`, undefined, true);
    const output = await tool.execute(input.data);
    return toolResult(id, typeof output === 'string' ? output : JSON.stringify(output), output, false);
  } catch (error) {
    return toolResult(id, `error: ${errorMessage(error)}`, undefined, true);
  }
}

function toolResult(id: string | number | null, text: string, output: unknown, isError: boolean): JsonRpcResponse {
  const result: Record<string, unknown> = { content: [{ type: 'text', text }], isError };
  if (output !== undefined) result.structuredContent = { result: output };
  return { jsonrpc: '2.0', id, result };
}
