/**
 * One environment instance and its episode bookkeeping (OpenEnv `State`: episode id, step count),
 * shared by the WebSocket sessions, the MCP sessions and the stateless HTTP calls of the env server.
 *
 * A step's action is agentrl's `{text, tool_call?}` or one of OpenEnv's MCP actions (what
 * `MCPToolClient` sends through step):
 *   {"type": "list_tools"}   → {observation: {tools: [{name, description, input_schema}], metadata: {}}, reward: null, done}
 *                              (not a turn: the step count stays)
 *   {"type": "call_tool", "tool_name": n, "arguments": a}
 *                            → the env's turn for the tool call `{text: "", tool_call: {name: n, arguments: a}}`
 *                              (reward, step limit, invalid-turn penalty as for any tool call), answered
 *                              as agentrl's observation plus OpenEnv's CallToolObservation fields:
 *                              tool_name, result {content, structured_content, data, is_error} where
 *                              `data` is the tool's result as the env shows it to the model (the
 *                              observation text), and error {error_type, message} (tool_not_found,
 *                              invalid_args) when the env found the call invalid (result is then null).
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Env } from '../../core/types.ts';
import { checkClientTask } from './client-task.ts';
import { describeTools } from './mcp.ts';
import {
  serializeReset,
  serializeStep,
  toWireAction,
  type McpAction,
  type ResetRequest,
  type WireAction,
  type WireObservation,
  type WireResult,
} from './wire.ts';

/** The answer to a `list_tools` action. */
export interface ToolListResult {
  observation: {
    tools: { name: string; description: string; input_schema: unknown }[];
    metadata: Record<string, unknown>;
  };
  reward: null;
  done: boolean;
}

/** The answer to a `call_tool` action: the turn's result plus OpenEnv's CallToolObservation fields. */
export interface CallToolStepResult extends WireResult {
  observation: WireObservation & {
    tool_name: string;
    result: {
      content: { type: 'text'; text: string }[];
      structured_content: null;
      meta: null;
      data: string;
      is_error: false;
    } | null;
    error: { error_type: 'invalid_args' | 'tool_not_found'; message: string } | null;
  };
}

export class EnvSession {
  /** The session's id (`openenv/session/create` answers it). */
  readonly id = randomUUID();
  readonly env: Env;
  private episodeId: string | null = null;
  private seed: number | null = null;
  private stepCount = 0;
  private over = false;
  private readonly allowClientTasks: boolean;

  /** `allowClientTasks`: pass a client's task unchecked to an env without a `taskSchema` (client-task.ts). Default false. */
  constructor(env: Env, options: { allowClientTasks?: boolean } = {}) {
    this.env = env;
    this.allowClientTasks = options.allowClientTasks ?? false;
  }

  /** Whether an episode was started (`reset`). */
  get started(): boolean {
    return this.episodeId !== null;
  }

  /** Starts an episode; without a seed the server draws one (reported by `state()`). A client's task is checked first (`ClientTaskError`). */
  async reset(request: ResetRequest): Promise<WireResult> {
    const seed = request.seed ?? randomInt(2 ** 31);
    const task =
      request.task === undefined ? undefined : checkClientTask(this.env, request.task, this.allowClientTasks);
    const observation = await this.env.reset(task === undefined ? { seed } : { seed, task });
    this.episodeId = request.episode_id ?? randomUUID();
    this.seed = seed;
    this.stepCount = 0;
    this.over = false;
    return serializeReset(observation);
  }

  async step(action: WireAction | McpAction): Promise<WireResult | ToolListResult | CallToolStepResult> {
    if (!('type' in action)) return this.turn(action);
    if (action.type === 'list_tools') {
      const tools = describeTools(this.env.tools ?? []).map(({ inputSchema, ...tool }) => ({
        ...tool,
        input_schema: inputSchema,
      }));
      return { observation: { tools, metadata: {} }, reward: null, done: this.over };
    }
    const known = (this.env.tools ?? []).some((tool) => tool.name === action.tool_name);
    const result = await this.turn({
      text: '',
      tool_call: { name: action.tool_name, arguments: action.arguments },
      metadata: action.metadata,
    });
    const { metadata, text } = result.observation;
    const invalid = metadata.invalidAction === true;
    const error: CallToolStepResult['observation']['error'] = invalid
      ? {
          error_type: known ? 'invalid_args' : 'tool_not_found',
          message: typeof metadata.reason === 'string' ? metadata.reason : text,
        }
      : null;
    const toolResult: CallToolStepResult['observation']['result'] = invalid
      ? null
      : { content: [{ type: 'text', text }], structured_content: null, meta: null, data: text, is_error: false };
    return {
      ...result,
      observation: { ...result.observation, tool_name: action.tool_name, result: toolResult, error },
    };
  }

  state(): Record<string, unknown> {
    return {
      episode_id: this.episodeId,
      step_count: this.stepCount,
      seed: this.seed,
      done: this.over,
      env: this.env.name,
    };
  }

  private async turn(action: WireAction): Promise<WireResult> {
    const result = await this.env.step(toWireAction(action));
    this.stepCount++;
    this.over = result.done || result.truncated;
    return serializeStep(result);
  }
}
