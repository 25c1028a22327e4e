/**
 * Any Model Context Protocol server as an agentrl tool set (@modelcontextprotocol/sdk): connect
 * over stdio (a command to spawn) or streamable HTTP (a URL), list the server's tools, and wrap
 * each as a `Tool` whose zod schema comes from its JSON Schema and whose `execute` calls the
 * server. A result flagged `isError` throws, so a tool-task env shows it as `error: …`.
 *
 *   const mcp = await connectMcp({ command: 'node', args: ['server.js'] });
 *   env.tools = mcp.tools; … await mcp.close();
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AgentRlError, type Tool } from '../../core/index.ts';
import { zodFromJsonSchema } from './json-schema.ts';
import { ToolError } from '../../core/errors.ts';

export type McpServerSpec =
  | { command: string; args?: string[]; cwd?: string; env?: Record<string, string> }
  | { url: string };

export interface McpConnection {
  tools: Tool[];
  close(): Promise<void>;
}

/** Connecting to or listing an MCP server failed. */
export class McpConnectionError extends AgentRlError {
  constructor(server: McpServerSpec, cause: unknown) {
    const where = 'url' in server ? server.url : [server.command, ...(server.args ?? [])].join(' ');
    super(
      'MCP_CONNECTION',
      `cannot use MCP server ${where}: ${cause instanceof Error ? cause.message : String(cause)}`,
      { server },
      { cause },
    );
  }
}

export async function connectMcp(server: McpServerSpec, options: { timeoutMs?: number } = {}): Promise<McpConnection> {
  // The SDK loads on the first connection, not when agentrl is imported.
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
  ]);
  const client = new Client({ name: 'agentrl', version: '0.1.0' });
  const transport =
    'url' in server
      ? new StreamableHTTPClientTransport(new URL(server.url))
      : new StdioClientTransport({
          command: server.command,
          args: server.args ?? [],
          cwd: server.cwd,
          env: server.env,
          stderr: 'pipe',
        });
  const timeout = options.timeoutMs ?? 10_000;
  let listed: Awaited<ReturnType<Client['listTools']>>;
  try {
    await client.connect(transport, { timeout });
    listed = await client.listTools(undefined, { timeout });
  } catch (error) {
    await client.close().catch(() => {});
    throw new McpConnectionError(server, error);
  }
  const tools: Tool[] = listed.tools.map((tool) => ({
    name: tool.name,
    description: tool.description ?? '',
    inputSchema: zodFromJsonSchema(tool.inputSchema),
    async execute(input: unknown) {
      const result = await client.callTool(
        { name: tool.name, arguments: input as Record<string, unknown> },
        undefined,
        { timeout },
      );
      const content = Array.isArray(result.content) ? result.content : [];
      const text = content
        .map((part: { type: string; text?: string }) => (part.type === 'text' ? part.text : `[${part.type}]`))
        .join('\n');
      if (result.isError === true) throw new ToolError(tool.name, text || 'tool failed');
      return text;
    },
  }));
  return { tools, close: () => client.close() };
}
