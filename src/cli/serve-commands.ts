/**
 * `agentrl serve-env <env>`, `agentrl serve-policy <checkpoint>` and `agentrl export-hf
 * <checkpoint>`: agentrl's environments and trained policies for the tools people already run
 * (OpenEnv trainers, OpenAI clients, Hugging Face / llama.cpp). The servers run until Ctrl-C or
 * SIGTERM, then close their sessions and exit.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { getEnvironment } from '../envs/index.ts';
import { hfArchitectures } from '../model/hf-config.ts';
import { baseQuantizations } from '../model/model-options.ts';
import { exportHuggingFace } from '../serve/export-hf.ts';
import { startEnvServer } from '../serve/openenv/env-server.ts';
import { startPolicyServer } from '../serve/openai/policy-server.ts';
import { requestLimitsSchema } from '../serve/openai/request-limits.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { defaultModelName, modelArgument, modelArgumentHelp } from './model-argument.ts';
import { parseEnvOptions } from './model-setup.ts';

const listenShape = {
  host: z.string().default('127.0.0.1').describe('address to listen on (0.0.0.0 for other machines)'),
};

export const serveEnvCommandSchema = z.object({
  ...listenShape,
  port: z.number().int().min(0).max(65535).default(8000).describe('port (0 = any free port)'),
  envOptions: z.string().default('{}').describe('environment options as JSON (see agentrl envs)'),
  maxSessions: z
    .number()
    .int()
    .positive()
    .default(64)
    .describe('concurrent WebSocket sessions at most (one more gets CAPACITY_REACHED)'),
  sessionTimeoutS: z.number().min(0).default(300).describe('close a session silent this many seconds (0 = never)'),
  allowClientTasks: z
    .boolean()
    .default(false)
    .describe(
      "pass a client's reset task unchecked to an env without a task schema (default: refused; envs with one always check it)",
    ),
});

export const servePolicyCommandSchema = z.object({
  ...listenShape,
  port: z.number().int().min(0).max(65535).default(8001).describe('port (0 = any free port)'),
  modelName: z
    .string()
    .optional()
    .describe("the model id clients pass (default: the model's folder or file name, or the pulled model's name)"),
  batchWindowMs: z.number().min(0).default(10).describe('wait this long for more requests to batch with the first'),
  maxBatchSize: z.number().int().positive().default(64).describe('rows per batched generation at most'),
  baseQuantization: z
    .enum(baseQuantizations)
    .default('float32')
    .describe(
      "the base's matmuls when the model samples: float32, int8 or int4 (8/4-bit blocks; sampled log-probs differ from float32 by a measured tolerance: docs/engine.md)",
    ),
  trainedStops: z
    .boolean()
    .default(true)
    .describe(
      'end every reply after the stop strings the checkpoint was trained with (agentrl train records them: </answer>, </tool_call>), kept in the reply; --no-trained-stops serves what the model writes on',
    ),
  ...requestLimitsSchema.shape, // --max-body-bytes, --max-messages, --max-tools, --max-choices …
});

export const exportHfCommandSchema = z.object({
  out: z.string().describe('the Hugging Face model folder to write'),
  architecture: z
    .enum(hfArchitectures)
    .optional()
    .describe('HF architecture (default: Qwen2 with q/k/v biases, else Llama)'),
});

function onePositional(positional: readonly string[], what: string): string {
  const [only] = positional;
  if (positional.length !== 1 || only === undefined)
    throw new InvalidArgumentError(
      `expected one ${what}, got ${positional.length === 0 ? 'none' : positional.join(' ')}`,
    );
  return only;
}

/** Resolves with the first SIGINT or SIGTERM the process gets. */
function untilStopped(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

export async function serveEnvCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(serveEnvCommandSchema, argv);
  const options = validateFlags(serveEnvCommandSchema, values);
  const descriptor = getEnvironment(onePositional(positional, 'environment name (see agentrl envs)'));
  const envOptions = parseEnvOptions(options.envOptions);
  descriptor.make(envOptions); // validates the options before listening
  const server = await startEnvServer({
    env: () => descriptor.make(envOptions),
    name: descriptor.name,
    description: descriptor.description,
    readme: `## Actions\n\n${descriptor.actions}\n\n## Reward\n\n${descriptor.reward}`,
    host: options.host,
    port: options.port,
    maxSessions: options.maxSessions,
    sessionTimeoutS: options.sessionTimeoutS,
    allowClientTasks: options.allowClientTasks,
  });
  console.error(
    `serve-env: ${descriptor.name} on ${server.url} (OpenEnv: POST /reset /step /mcp, GET /state /health /metadata /schema /openapi.json /docs, WebSocket /ws /mcp; ` +
      `${options.maxSessions} sessions, idle timeout ${options.sessionTimeoutS || 'off'} s). Ctrl-C stops.`,
  );
  await untilStopped();
  await server.close();
  return 0;
}

export async function servePolicyCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(servePolicyCommandSchema, argv);
  const options = validateFlags(servePolicyCommandSchema, values);
  const checkpoint = modelArgument(positional, `agentrl serve-policy ${modelArgumentHelp} [--port 8001]`);
  const modelName = options.modelName ?? defaultModelName(checkpoint);
  const server = await startPolicyServer({
    model: checkpoint, // loaded by the server, released by its close()
    baseQuantization: options.baseQuantization,
    modelName,
    host: options.host,
    port: options.port,
    batchWindowMs: options.batchWindowMs,
    maxBatchSize: options.maxBatchSize,
    requestLimits: requestLimitsSchema.parse(options), // the limit fields only
    ...(options.trainedStops ? {} : { turnEnds: [] }),
  });
  const ends = server.turnEnds.length === 0 ? '' : `, replies end after ${server.turnEnds.join(' or ')} as in training`;
  console.error(
    `serve-policy: ${modelName} (${checkpoint}, ${options.baseQuantization} base, context ${server.policy.contextWindow}, chat format ${server.policy.chatFormat?.name ?? 'agentrl'}${ends}) on ${server.url}/v1 ` +
      `(POST /v1/chat/completions /v1/completions, GET /v1/models). Ctrl-C stops.`,
  );
  const signal = await untilStopped();
  await server.close(); // cuts the open connections (their generations stop), then releases the model
  console.error(`serve-policy: stopped (${signal}): connections closed, model released`);
  return 0;
}

export async function exportHfCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(exportHfCommandSchema, argv);
  const options = validateFlags(exportHfCommandSchema, values);
  const checkpoint = modelArgument(positional, `agentrl export-hf ${modelArgumentHelp} --out <folder>`);
  const result = await exportHuggingFace(checkpoint, options.out, { architecture: options.architecture });
  console.log(
    `export-hf: ${options.out} (${result.architecture}, ${result.parameters.toLocaleString('en-US')} parameters): ${result.files.join(', ')}`,
  );
  return 0;
}
