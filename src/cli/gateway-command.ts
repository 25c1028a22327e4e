/**
 * `agentrl gateway <checkpoint>`: the training gateway as a command — a model (a checkpoint, a
 * Hugging Face folder, a .gguf file or a pulled model's name: model/model-sources.ts) served as the
 * OpenAI API (chat completions, streaming, tools) that records every call of every session and
 * writes the sessions clients score to the run store as trajectories of a run:
 *
 *   agentrl gateway checkpoints/my-run --port 8002 --run-name my-agent
 *   # the agent: baseURL http://127.0.0.1:8002/v1, header x-session-id: <session> (or model agentrl/<session>)
 *   curl -X POST http://127.0.0.1:8002/v1/sessions/<session>/reward -H 'content-type: application/json' -d '{"reward": 1}'
 *   agentrl export my-agent --format parquet      # → TRL / verl;  agentrl dashboard shows the run
 *
 * Every `--record-every-s` the scored sessions become one step of the run (gateway-recording.ts);
 * sessions idle past `--session-timeout-s` are dropped and counted. Ctrl-C or SIGTERM records
 * what was scored, drops (and counts) the sessions still open, and ends the run `completed` with
 * the signal as its reason (a gateway's normal end; exit 0). Training on the sessions is
 * `runRl({ collect: gatewayCollect(...) })` in TypeScript, or another trainer on the export.
 */
import { z } from 'zod';
import { loadModelCheckpoint } from '../model/model-sources.ts';
import { TransformerModel } from '../model/model.ts';
import { byteTokenizer } from '../chat/tokenizer.ts';
import { BuiltinPolicy } from '../policy/builtin-policy.ts';
import { startGateway } from '../serve/gateway/gateway.ts';
import { RunStore, defaultStorePath } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { GatewayRecording } from './gateway-recording.ts';
import { defaultModelName, modelArgument, modelArgumentHelp } from './model-argument.ts';
import { signalName, type StopSignal } from './interrupt.ts';
import { sourceCommit } from './run-options.ts';

export const gatewayCommandSchema = z.object({
  host: z.string().default('127.0.0.1').describe('address to listen on (0.0.0.0 for other machines)'),
  port: z.number().int().min(0).max(65535).default(8002).describe('port (0 = any free port)'),
  store: z.string().default(defaultStorePath).describe('run store (SQLite file) the sessions are recorded in'),
  runName: z.string().min(1).optional().describe('name of the recorded run (default gateway-<id>)'),
  modelName: z
    .string()
    .optional()
    .describe("the model id /v1/models lists (default: the model's folder or file name); requests may name any model"),
  sessionTimeoutS: z
    .number()
    .positive()
    .default(120)
    .describe('drop (and count) a session with no call for this many seconds'),
  recordEveryS: z
    .number()
    .positive()
    .default(5)
    .describe('write the scored sessions to the store this often (one step each time)'),
  batchWindowMs: z.number().min(0).default(10).describe('wait this long for more calls to batch with the first'),
  maxBatchSize: z.number().int().positive().default(64).describe('rows per batched generation at most'),
  rewardMin: z.number().default(-1e6).describe('smallest reward a client may post to /v1/sessions/<id>/reward'),
  rewardMax: z.number().default(1e6).describe('largest reward a client may post to /v1/sessions/<id>/reward'),
});

/** Resolves with the first SIGINT or SIGTERM. */
function untilStopped(): Promise<StopSignal> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
}

/** The model (a checkpoint, HF folder, .gguf or pulled name) as the gateway's sampler, with its tokenizer and (when it has one) its own chat template. */
async function checkpointSampler(checkpoint: string) {
  const loaded = await loadModelCheckpoint(checkpoint);
  const chatFormat = loaded.chatFormat;
  const tokenizer = chatFormat?.tokenizer ?? loaded.tokenizer ?? byteTokenizer;
  // A real model's checkpoint samples on onnxruntime (10–20× faster than jax-js at that size), as serve-policy does.
  const sampler = new BuiltinPolicy({
    model: await TransformerModel.fromParams(loaded.config, loaded.params),
    tokenizer,
    ...(chatFormat === undefined ? {} : { chatFormat, inference: 'onnx' as const }),
  });
  return { sampler, tokenizer, chatFormat };
}

/** Opens the store and creates the gateway's run in it; closes the gateway if either fails. */
async function createGatewayRun(
  options: z.output<typeof gatewayCommandSchema>,
  config: { checkpoint: string; modelName: string },
  gateway: { close(): Promise<void> },
): Promise<{ store: RunStore; run: RunRecord }> {
  try {
    const store = RunStore.open(options.store);
    const run = store.createRun({
      name: options.runName,
      namePrefix: 'gateway',
      command: 'gateway',
      seed: 0,
      gitCommit: sourceCommit(),
      config: { checkpoint: config.checkpoint, ...options, modelName: config.modelName },
    });
    return { store, run };
  } catch (error) {
    await gateway.close();
    throw error;
  }
}

export async function gatewayCommand(argv: readonly string[]): Promise<number> {
  const { values, positional } = parseFlags(gatewayCommandSchema, argv);
  const options = validateFlags(gatewayCommandSchema, values);
  const checkpoint = modelArgument(positional, `agentrl gateway ${modelArgumentHelp} [--port 8002] [--run-name …]`);
  const { sampler, tokenizer, chatFormat } = await checkpointSampler(checkpoint);
  const modelName = options.modelName ?? defaultModelName(checkpoint);
  const stopped = untilStopped(); // from here on a signal closes the run cleanly
  const gateway = await startGateway({
    sampler,
    modelName,
    host: options.host,
    port: options.port,
    sessionTimeoutMs: options.sessionTimeoutS * 1000,
    batchWindowMs: options.batchWindowMs,
    maxBatchSize: options.maxBatchSize,
    rewardRange: { min: options.rewardMin, max: options.rewardMax },
    ...(chatFormat === undefined ? {} : { chatFormat }),
  });
  const { store, run } = await createGatewayRun(options, { checkpoint, modelName }, gateway);
  const recording = new GatewayRecording({ store, runId: run.id, gateway, tokenizer });
  let fail!: (error: unknown) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  failed.catch(() => {}); // raced below; a failure after the race has nobody to tell
  const ticker = setInterval(() => {
    try {
      recording.record();
    } catch (error) {
      fail(error);
    }
  }, options.recordEveryS * 1000);
  try {
    console.error(
      `gateway: ${modelName} (${checkpoint}, context ${sampler.contextWindow}, chat format ${chatFormat?.name ?? 'agentrl'}) on ${gateway.baseURL} — recording run ${run.name} in ${store.path}. ` +
        `Sessions: header x-session-id, model agentrl/<session> or user; score with POST /v1/sessions/<session>/reward. Ctrl-C stops.`,
    );
    const signal = await Promise.race([stopped, failed]);
    clearInterval(ticker);
    await recording.recordFinal(() => gateway.close());
    const counters = gateway.metrics();
    store.setStatus(run.id, 'completed', `stopped by ${signalName(signal)}`);
    console.error(
      `gateway: ${signalName(signal)} — run ${run.name}: ${counters.sessionsFinished} sessions recorded (${counters.calls} calls, ${counters.prefixBreaks} prefix breaks), ` +
        `${counters.sessionsTimedOut} timed out, ${counters.sessionsDropped} dropped, ${counters.callsAbandoned} calls abandoned. ` +
        `agentrl export ${run.name} --store ${store.path} --format parquet`,
    );
    return 0;
  } catch (error) {
    try {
      store.setStatus(run.id, 'failed', error instanceof Error ? error.message : String(error));
    } catch {
      // The store itself failed: the error being reported says so.
    }
    throw error;
  } finally {
    clearInterval(ticker);
    await gateway.close();
    try {
      store.unlockRun(run.id);
    } finally {
      store.close();
    }
  }
}
