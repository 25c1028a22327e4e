/**
 * The OpenEnv wire format for agentrl environments (../shared/notes/openenv-protocol.md): zod
 * schemas for what travels, their JSON Schemas (`GET /schema`, `GET /openapi.json`), and the
 * mapping between agentrl's `StepResult` and OpenEnv's `{observation, reward, done}`.
 *
 *   action       {"text": "<answer>Right</answer>"}                     the policy's reply
 *                {"text": "", "tool_call": {"name": "calculator", "arguments": {"expression": "2+3"}}}
 *                {"type": "list_tools"}   {"type": "call_tool", "tool_name": "calculator", "arguments": {...}}   (OpenEnv's MCP actions, session.ts)
 *   observation  {"text": "_P__\n...", "data": {...}, "truncated": false, "metadata": {"invalidAction": false}}
 *   response     {"observation": {...}, "reward": 0, "done": false}
 *
 * `done` on the wire is "the episode is over" (agentrl's `done || truncated`), so an OpenEnv client
 * that loops until `done` stops at the step limit too; `observation.truncated` says which of the
 * two ended it, and `observation.metadata` carries agentrl's `StepResult.info` (there OpenEnv's
 * clients read it: GenericEnvClient hands back the observation, MCPToolClient reads its
 * `metadata`). Reset answers `reward: null`. Actions reject unknown fields (OpenEnv's
 * `extra="forbid"`); a bad one is HTTP 422 or a VALIDATION_ERROR message.
 *
 * Only what the agent may see travels: `text` and `data`. An observation's `privileged` part (the
 * answer, hidden tests, the other side's values) is never serialized, on any route (HTTP,
 * WebSocket, MCP all answer through `serializeReset` / `serializeStep`); a client that needs it for
 * a scripted expert rebuilds it from the seed with a local copy of the env (envs/with-privileged.ts).
 */
import { z } from 'zod';
import type { Action, Observation, StepResult } from '../../core/types.ts';
import { isJsonObject, jsonObjectSchema as jsonObject } from '../../core/json-object.ts';

export const actionSchema = z.strictObject({
  /** The policy's reply, parsed by the environment (`<think>…</think><answer>…</answer>` or `<tool_call>…</tool_call>`). */
  text: z.string().describe('the policy reply, parsed by the environment (see GET /metadata)'),
  /** A structured tool call (instead of one written in `text`). */
  tool_call: z
    .strictObject({
      id: z.string().optional(),
      name: z.string().min(1),
      arguments: jsonObject.default({}),
    })
    .optional()
    .describe('a structured tool call; the environment runs it as its turn'),
  metadata: jsonObject.default({}).describe('free-form data, ignored by the environment'),
});
export type WireAction = z.output<typeof actionSchema>;

/** The full Observation model (`done` and `reward` are lifted to the response's top level). */
export const observationSchema = z.strictObject({
  text: z.string().describe('what goes into the model context'),
  data: z
    .unknown()
    .optional()
    .describe('structured payload the agent may see (grid, expression, ...) for renderers and scripted policies'),
  truncated: z.boolean().describe('the episode was cut (step limit) rather than reaching a terminal state'),
  done: z.boolean().default(false).describe('the episode is over (terminal or truncated)'),
  reward: z.number().nullable().default(null),
  metadata: jsonObject.default({}).describe("agentrl's StepResult.info (invalidAction, success, reason, ...)"),
});

/** OpenEnv's MCP actions (`ListToolsAction`, `CallToolAction`), told apart from agentrl's by `type`. */
export const listToolsActionSchema = z.strictObject({
  type: z.literal('list_tools'),
  metadata: jsonObject.default({}),
});
export const callToolActionSchema = z.strictObject({
  type: z.literal('call_tool'),
  tool_name: z.string().min(1).describe("the tool's name (see list_tools)"),
  arguments: jsonObject.default({}),
  metadata: jsonObject.default({}),
});
export const mcpActionSchema = z.discriminatedUnion('type', [listToolsActionSchema, callToolActionSchema]);
export type McpAction = z.output<typeof mcpActionSchema>;

/** The action schema for a step's `action`: an MCP action when it has a `type` (as OpenEnv's deserialize_action routes it), else agentrl's. */
export function stepActionSchema(action: unknown): z.ZodType<WireAction | McpAction> {
  return isJsonObject(action) && 'type' in action ? mcpActionSchema : actionSchema;
}

export const stateSchema = z.looseObject({
  episode_id: z.string().nullable().default(null),
  step_count: z.number().int().min(0).default(0),
  seed: z.number().int().nullable().default(null).describe('seed of the current episode'),
  done: z.boolean().default(false).describe('the current episode is over'),
});

export const resetRequestSchema = z.looseObject({
  seed: z.number().int().min(0).optional(),
  episode_id: z.string().max(255).optional(),
  /** agentrl extension: a task object passed to `env.reset({ seed, task })`. */
  task: z.unknown().optional(),
});
export type ResetRequest = z.output<typeof resetRequestSchema>;

export const stepRequestSchema = z.looseObject({
  action: jsonObject,
  timeout_s: z.number().positive().optional(),
  request_id: z.string().max(255).optional(),
  /** agentrl extension for the stateless HTTP /step: the seed of the episode whose first step this is. */
  seed: z.number().int().min(0).optional(),
});

/** Everything `/schema` answers. */
export function wireSchemas(): { action: unknown; observation: unknown; state: unknown } {
  return {
    action: z.toJSONSchema(actionSchema, { io: 'input' }),
    observation: z.toJSONSchema(observationSchema, { io: 'output' }),
    state: z.toJSONSchema(stateSchema, { io: 'output' }),
  };
}

export interface WireObservation {
  text: string;
  data?: unknown;
  truncated: boolean;
  /** agentrl's `StepResult.info` (`{}` after a reset). */
  metadata: Record<string, unknown>;
}

export interface WireResult {
  observation: WireObservation;
  reward: number | null;
  done: boolean;
}

/** What a step answers: `observation` is agentrl's, or for MCP actions OpenEnv's ListToolsObservation / CallToolObservation (session.ts). */
export const stepResponseSchema = z.strictObject({
  observation: z
    .looseObject({ metadata: jsonObject.default({}) })
    .describe(
      "the observation: text, data, truncated and metadata (agentrl's StepResult.info); for MCP actions also tools, or tool_name, result, error",
    ),
  reward: z.number().nullable().describe('null after a reset'),
  done: z.boolean().describe('the episode is over (terminal or truncated)'),
});
export const healthSchema = z.strictObject({ status: z.enum(['healthy', 'unhealthy', 'degraded']) });
export const metadataSchema = z.strictObject({
  name: z.string(),
  description: z.string(),
  readme_content: z.string().nullable().optional(),
  version: z.string().nullable().optional(),
  author: z.string().nullable().optional(),
  documentation_url: z.string().nullable().optional(),
});
/** FastAPI's 422 body. */
export const validationErrorSchema = z.strictObject({
  detail: z.array(
    z.strictObject({ type: z.string(), loc: z.array(z.union([z.string(), z.number()])), msg: z.string() }),
  ),
});

export function toWireAction(action: WireAction): Action {
  if (action.tool_call === undefined) return { text: action.text };
  const { id = 'call_0', name, arguments: args } = action.tool_call;
  return { text: action.text, toolCall: { id, name, arguments: args } };
}

export function fromWireAction(action: Action): WireAction {
  const wire: WireAction = { text: action.text, metadata: {} };
  if (action.toolCall !== undefined)
    wire.tool_call = { id: action.toolCall.id, name: action.toolCall.name, arguments: action.toolCall.arguments };
  return wire;
}

/** A reset's answer: the observation's `text` and `data`, never its `privileged` part. */
export function serializeReset(observation: Observation): WireResult {
  return { observation: wireObservation(observation, false, {}), reward: null, done: false };
}

/** A step's answer: the observation's `text` and `data` (never its `privileged` part) and the env's info as `metadata`. */
export function serializeStep(result: StepResult): WireResult {
  return {
    observation: wireObservation(result.observation, result.truncated, { ...result.info }),
    reward: result.reward,
    done: result.done || result.truncated,
  };
}

/** The inverse of `serializeStep` (agentrl's `done` is "over and not truncated"). */
export function deserializeStep(wire: WireResult): StepResult {
  const truncated = wire.observation.truncated === true;
  return {
    observation: deserializeObservation(wire),
    reward: wire.reward ?? 0,
    done: wire.done && !truncated,
    truncated,
    info: wire.observation.metadata ?? {},
  };
}

export function deserializeObservation(wire: WireResult): Observation {
  const { text, data } = wire.observation;
  return data === undefined ? { text } : { text, data };
}

/** Copies only the public fields: a new Observation field stays off the wire until it is added here. */
function wireObservation(
  observation: Observation,
  truncated: boolean,
  metadata: Record<string, unknown>,
): WireObservation {
  return observation.data === undefined
    ? { text: observation.text, truncated, metadata }
    : { text: observation.text, data: observation.data, truncated, metadata };
}

/** A zod failure as FastAPI's 422 `detail` list. */
export function validationDetail(
  error: z.ZodError,
  location: string[],
): { type: string; loc: (string | number)[]; msg: string }[] {
  return error.issues.map((issue) => ({
    type: issue.code,
    loc: [...location, ...issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key))],
    msg: issue.message,
  }));
}
