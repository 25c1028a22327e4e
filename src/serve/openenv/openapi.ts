/**
 * `GET /openapi.json`: the env server's HTTP API as an OpenAPI 3.1 document, generated from the
 * zod schemas the server validates with (wire.ts, mcp.ts). `openenv validate <url>` reads its
 * `info.version` (the OpenEnv HTTP API version, 1.x) and `paths` (simulation mode: /reset, /step
 * and /state are present). The WebSockets (/ws, /mcp) are described in `info.description`;
 * OpenAPI has no way to declare them.
 */
import { z } from 'zod';
import { entry } from '../../core/indexing.ts';
import { jsonRpcRequestSchema, jsonRpcResponseSchema } from './mcp.ts';
import {
  actionSchema,
  callToolActionSchema,
  healthSchema,
  listToolsActionSchema,
  metadataSchema,
  observationSchema,
  resetRequestSchema,
  stateSchema,
  stepRequestSchema,
  stepResponseSchema,
  validationErrorSchema,
} from './wire.ts';

/** The version of the OpenEnv HTTP API this server speaks (what openenv-core's FastAPI servers declare). */
export const openEnvApiVersion = '1.0.0';

export interface HttpRoute {
  method: 'get' | 'post';
  path: string;
  summary: string;
  /** The component schema of the JSON body, if any. */
  body?: string;
  /** The component schema of the 200 answer, or 'html'. */
  answer: string;
  /** The body may be omitted (POST /reset). */
  optionalBody?: boolean;
  /** A bad body is answered 422 (FastAPI's validation error). */
  validates?: boolean;
}

/** Every HTTP route of the env server (env-server.ts serves exactly these; its test checks). */
export const httpRoutes: readonly HttpRoute[] = [
  {
    method: 'post',
    path: '/reset',
    summary: 'Start an episode (stateless: a fresh env, closed after the call)',
    body: 'ResetRequest',
    optionalBody: true,
    answer: 'StepResponse',
    validates: true,
  },
  {
    method: 'post',
    path: '/step',
    summary: 'The first turn of the episode of `seed` (stateless; episodes of several turns use the WebSocket /ws)',
    body: 'StepRequest',
    answer: 'StepResponse',
    validates: true,
  },
  { method: 'get', path: '/state', summary: 'The state of a fresh env (episode id, step count)', answer: 'State' },
  { method: 'get', path: '/health', summary: 'Health check', answer: 'HealthResponse' },
  {
    method: 'get',
    path: '/metadata',
    summary: 'Name, description, README (actions, reward, instructions)',
    answer: 'EnvironmentMetadata',
  },
  {
    method: 'get',
    path: '/schema',
    summary: 'JSON Schemas of the action, the observation and the state',
    answer: 'SchemaResponse',
  },
  {
    method: 'post',
    path: '/mcp',
    summary:
      'MCP over JSON-RPC 2.0: initialize, ping, tools/list, tools/call, openenv/session/create, openenv/session/close',
    body: 'JsonRpcRequest',
    answer: 'JsonRpcResponse',
  },
  {
    method: 'get',
    path: '/agentrl/env',
    summary: "agentrl extension: the env's instructions, tools and session limits (RemoteEnvPool reads it)",
    answer: 'AgentRlEnvInfo',
  },
  { method: 'get', path: '/openapi.json', summary: 'This document', answer: 'OpenApiDocument' },
  { method: 'get', path: '/docs', summary: 'This API as an HTML page', answer: 'html' },
];

const envInfoSchema = z.strictObject({
  name: z.string(),
  description: z.string(),
  instructions: z.string().nullable(),
  tools: z.array(z.strictObject({ name: z.string(), description: z.string(), inputSchema: z.unknown() })),
  max_sessions: z.number().int(),
  session_timeout_s: z.number().nullable(),
});

/** The component schemas, each from its zod schema (inputs as accepted, answers as sent). */
function componentSchemas(): Record<string, unknown> {
  const input = (schema: z.ZodType): Record<string, unknown> =>
    withoutDialect(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
  const output = (schema: z.ZodType): Record<string, unknown> =>
    withoutDialect(z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }));
  const stepRequest = input(stepRequestSchema) as { properties: Record<string, unknown> };
  stepRequest.properties.action = {
    anyOf: ['Action', 'ListToolsAction', 'CallToolAction'].map((name) => ({ $ref: `#/components/schemas/${name}` })),
    description: "agentrl's action, or one of OpenEnv's MCP actions (told apart by `type`)",
  };
  return {
    ResetRequest: input(resetRequestSchema),
    StepRequest: stepRequest,
    StepResponse: output(stepResponseSchema),
    Action: input(actionSchema),
    ListToolsAction: input(listToolsActionSchema),
    CallToolAction: input(callToolActionSchema),
    Observation: output(observationSchema),
    State: output(stateSchema),
    HealthResponse: output(healthSchema),
    EnvironmentMetadata: output(metadataSchema),
    SchemaResponse: {
      type: 'object',
      properties: { action: { type: 'object' }, observation: { type: 'object' }, state: { type: 'object' } },
      required: ['action', 'observation', 'state'],
    },
    JsonRpcRequest: input(jsonRpcRequestSchema),
    JsonRpcResponse: output(jsonRpcResponseSchema),
    HTTPValidationError: output(validationErrorSchema),
    AgentRlEnvInfo: output(envInfoSchema),
    OpenApiDocument: { type: 'object', description: 'an OpenAPI 3.1 document' },
  };
}

const webSockets = [
  'WebSocket /ws (one env per connection; what GenericEnvClient and MCPToolClient use):',
  '→ {"type":"reset","data":{seed?, episode_id?, task?}} {"type":"step","data":<action>} {"type":"state"} {"type":"close"} {"type":"mcp","data":<JSON-RPC>}',
  '← {"type":"observation","data":<StepResponse>} {"type":"state","data":<State>} {"type":"mcp","data":<JSON-RPC>} {"type":"error","data":{message, code}}',
  'codes: INVALID_JSON, UNKNOWN_TYPE, VALIDATION_ERROR, EXECUTION_ERROR, CAPACITY_REACHED, FACTORY_ERROR, SESSION_ERROR.',
  'WebSocket /mcp: JSON-RPC 2.0 messages on one env per connection (the episode of seed 0).',
];

/** The OpenAPI document of a server for the env `name`. */
export function openApiDocument({ name, description }: { name: string; description: string }): Record<string, unknown> {
  const ref = (schema: string): { $ref: string } => ({ $ref: `#/components/schemas/${schema}` });
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of httpRoutes) {
    const answer =
      route.answer === 'html'
        ? { 'text/html': { schema: { type: 'string' } } }
        : { 'application/json': { schema: ref(route.answer) } };
    const responses: Record<string, unknown> = { '200': { description: 'OK', content: answer } };
    if (route.validates)
      responses['422'] = {
        description: 'the body does not validate',
        content: { 'application/json': { schema: ref('HTTPValidationError') } },
      };
    if (route.method === 'post') responses['500'] = { description: 'the environment failed: {detail}' };
    const operation: Record<string, unknown> = {
      summary: route.summary,
      operationId: `${route.method}${route.path.replace(/[^A-Za-z]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
      responses,
    };
    if (route.body !== undefined)
      operation.requestBody = {
        required: route.optionalBody !== true,
        content: { 'application/json': { schema: ref(route.body) } },
      };
    paths[route.path] = { ...paths[route.path], [route.method]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `agentrl environment server: ${name}`,
      version: openEnvApiVersion,
      description: `${description}\n\nThe OpenEnv environment protocol (HTTP API ${openEnvApiVersion}), served by agentrl.\n\n${webSockets.join('\n\n')}`,
    },
    paths,
    components: { schemas: componentSchemas() },
  };
}

function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => entry(escapes, character, 'HTML escape'));
}

/** `GET /docs`: the routes and the WebSocket protocols on one self-contained page (no scripts, nothing fetched). */
export function docsPage({ name, description }: { name: string; description: string }): string {
  const rows = httpRoutes
    .map(
      (route) =>
        `<tr><td>${route.method.toUpperCase()}</td><td><code>${escapeHtml(route.path)}</code></td><td>${escapeHtml(route.summary)}</td><td>${route.body ?? ''}</td><td>${route.answer}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(name)}: OpenEnv API</title>
<style>body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem}td,th{border-bottom:1px solid #ddd;padding:.3rem .6rem;text-align:left;vertical-align:top}table{border-collapse:collapse}code,pre{background:#f4f4f4}</style>
</head><body>
<h1>${escapeHtml(name)}</h1>
<p>${escapeHtml(description)}</p>
<p>The OpenEnv environment protocol (HTTP API ${openEnvApiVersion}), served by agentrl. Schemas: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1), <a href="/schema">/schema</a>, <a href="/metadata">/metadata</a>.</p>
<h2>HTTP</h2>
<table><tr><th>Method</th><th>Path</th><th>What</th><th>Body</th><th>Answer</th></tr>
${rows}
</table>
<h2>WebSockets</h2>
<pre>${webSockets.map(escapeHtml).join('\n')}</pre>
</body></html>
`;
}
