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
 *
 * `--base-quantization int8|int4` samples on an 8/4-bit base as serve-policy's does (loadServedPolicy; default float32).
 *
 * `--backend tinker --base-url … --base-model … [--tokenizer …] [checkpoint]`: the sampler is a
 * `TinkerPolicy` — replies sampled by the Tinker server's sampling client (token ids and log-probs
 * recorded as sampled), from the base model or the LoRA a `tinker-checkpoint.json` folder names
 * (what `agentrl sft|train --backend tinker` wrote); the context is the preset's (model-presets.ts).
 * The same `TinkerPolicy` trains on the sessions through `gatewayCollect` (tinker-gateway.test.ts).
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { startGateway } from '../serve/gateway/gateway.ts';
import { loadServedPolicy } from '../serve/openai/policy-server.ts';
import { RunStore, defaultStorePath } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { parseFlags, validateFlags } from './flags.ts';
import { GatewayRecording } from './gateway-recording.ts';
import { defaultModelName, modelArgument, modelArgumentHelp } from './model-argument.ts';
import { signalName, type StopSignal } from './interrupt.ts';
import { sourceCommit } from './run-options.ts';
import { backendSchema } from './backend-setup.ts';
import { baseQuantizations } from '../model/model-options.ts';
import { tinkerGatewaySampler } from './tinker-backend.ts';

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
  ...backendSchema.pick({
    backend: true,
    baseUrl: true,
    baseModel: true,
    tokenizer: true,
    loraRank: true,
    tinkerLossReduction: true,
    tinkerWire: true,
  }).shape,
  maxSeqLen: z
    .number()
    .int()
    .positive()
    .optional()
    .describe("tinker: the context window (default: the base model's, from its config.json or the preset table)"),
  seed: z.number().int().default(0).describe('tinker: seed of the LoRA initialisation'),
  baseQuantization: z
    .enum(baseQuantizations)
    .default('float32')
    .describe(
      "the base's matmuls when the model samples: float32, int8 or int4 (8/4-bit blocks; sampled log-probs differ from float32 by a measured tolerance: docs/engine.md); built-in backend only",
    ),
});

/** The sampler `--backend` names: the model argument on the built-in engine, or a TinkerPolicy (see the header). */
async function gatewaySampler(options: z.output<typeof gatewayCommandSchema>, positional: readonly string[]) {
  if (options.backend === 'tinker') {
    if (options.baseQuantization !== 'float32')
      throw new InvalidArgumentError(
        `agentrl gateway --base-quantization ${options.baseQuantization}: the tinker backend samples on the Tinker server; the flag is for the built-in engine`,
        { baseQuantization: options.baseQuantization },
      );
    const [checkpoint, ...extra] = positional;
    if (extra.length > 0)
      throw new InvalidArgumentError(
        `agentrl gateway --backend tinker takes at most one folder holding tinker-checkpoint.json, got ${positional.join(' ')}`,
        { positional },
      );
    const tinker = await tinkerGatewaySampler(options, checkpoint);
    return tinker;
  }
  const checkpoint = modelArgument(positional, `agentrl gateway ${modelArgumentHelp} [--port 8002] [--run-name …]`);
  // The model (a checkpoint, HF folder, .gguf or pulled name) as serve-policy loads it; `close` frees its sessions.
  const sampler = await loadServedPolicy(checkpoint, { baseQuantization: options.baseQuantization });
  return {
    sampler,
    tokenizer: sampler.tokenizer,
    chatFormat: sampler.chatFormat,
    source: checkpoint,
    close: () => sampler.model.release(),
  };
}

/** Resolves with the first SIGINT or SIGTERM. */
function untilStopped(): Promise<StopSignal> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
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
  const { sampler, tokenizer, chatFormat, source: checkpoint, close } = await gatewaySampler(options, positional);
  const modelName = options.modelName ?? defaultModelName(checkpoint);
  const base = options.backend === 'tinker' ? '' : `${options.baseQuantization} base, `;
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
  }).catch(async (error: unknown) => {
    await close(); // a TinkerPolicy's heartbeats would keep the process alive
    throw error;
  });
  const { store, run } = await createGatewayRun(
    options,
    { checkpoint, modelName },
    {
      close: async () => {
        await gateway.close();
        await close();
      },
    },
  );
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
      `gateway: ${modelName} (${checkpoint}, ${base}context ${sampler.contextWindow}, chat format ${chatFormat?.name ?? 'agentrl'}) on ${gateway.baseURL} — recording run ${run.name} in ${store.path}. ` +
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
    await close();
    try {
      store.unlockRun(run.id);
    } finally {
      store.close();
    }
  }
}
