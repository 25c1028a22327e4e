/**
 * An OpenAI-compatible server for any `Policy` — a trained built-in model (`agentrl serve-policy
 * <checkpoint>`), an `OpenAIPolicy` in front of another server, a `TinkerPolicy`, a
 * `ScriptedPolicy` — so any OpenAI client (the `openai` SDK, the Vercel AI SDK, LangChain, curl)
 * can use it:
 *
 *   POST /v1/chat/completions   messages → choices[].message {content, tool_calls}; stream (SSE),
 *                               n, stop, seed, max_tokens / max_completion_tokens, logprobs,
 *                               tools + tool_choice 'auto' | 'none' (tool-format.ts)
 *   POST /v1/completions        prompt (string, strings, ids) → choices[].text; stream, echo, logprobs: 0
 *   GET  /v1/models, /v1/models/{id}, /health
 *
 * Concurrent requests are batched (batcher.ts): requests arriving within `batchWindowMs` that
 * share their sampling options run as one `policy.generateBatch` call (policy-generator.ts, the
 * path the training gateway shares; for the built-in model one forward pass per token for all
 * rows). Streaming sends each token's text as it is sampled when the policy streams (`onToken`:
 * the built-in one yields to the event loop between tokens, so chunks leave as they are made and
 * `/health` and new requests are answered while a batch runs; a request arriving mid-batch joins
 * the next batch, there is no continuous batching); another policy's reply arrives in one burst.
 * A client that leaves stops its rows: a batch all of whose clients left stops at its next token
 * (batcher.ts), and a policy that does not stream (an `OpenAIPolicy`) has its upstream requests
 * cancelled (`generateBatch`'s `signal`). Log-probs are those of the sampled
 * tokens under the temperature-scaled distribution (what the trainer's old log-probs are); top
 * alternatives are not computed (`top_logprobs` > 0 is a 400). `tool_choice: 'required'` or a
 * named function cannot be enforced on a free-running model and are treated like 'auto'.
 * Special tokens a model samples mid-reply are left out of the text (vLLM's default), the stop
 * token `<|end|>` included; they still count in `usage`, and `logprobs` lists every sampled id but the final stop token.
 * Completion prompts given as text get `<|bos|>` in front, as every training sequence had.
 * Errors use OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
 *
 * With a model's own chat format (the policy's `chatFormat`, src/chat: a SmolLM2, Qwen or Llama-3
 * checkpoint with its tokenizer.json and Jinja template) the prompt is rendered in it, tools included, the
 * reply stops at its stop ids and tool calls are read in its family's format (SmolLM2
 * `<tool_call>[…]`, Qwen `<tool_call>{…}`); agentrl's byte template otherwise. The endpoints are
 * Hono routes (policy-routes.ts), one handler per endpoint; the state they share is
 * policy-context.ts.

 */
import { TransformerModel } from '../../engine/transformer-model.ts';
import { type BaseQuantization, baseQuantizations } from '../../model/model-options.ts';
import { loadModelCheckpoint } from '../../model/model-sources.ts';
import { BuiltinPolicy } from '../../policy/builtin-policy.ts';
import type { Policy } from '../../policy/types.ts';
import { CheckpointError, InvalidArgumentError } from '../../core/errors.ts';
import { listenApp, type ListeningApp } from '../hono-server.ts';
import { createPolicyContext, type PolicyContext, type PolicyContextOptions } from './policy-context.ts';
import { policyApp } from './policy-routes.ts';

export type { FinishedChat } from './chat-completions.ts';

/** What the server serves: a policy of the caller's, or a model it loads (and so owns) itself. */
export type ServedSource =
  | {
      /** Any Policy. It stays the caller's: `close()` does not release it. */
      policy: Policy;
      model?: never;
      baseQuantization?: never;
    }
  | {
      /**
       * A model source (`loadServedPolicy`: checkpoint or Hugging Face folder, .gguf, pulled model's
       * name), loaded as a BuiltinPolicy that `close()` releases. Its replies end after the stop
       * strings it was trained with (`trainedStopStrings`) unless `turnEnds` is given (`[]`: none).
       */
      model: string;
      policy?: never;
      /** How the loaded model's generation session holds the base's matmuls (`loadServedPolicy`); default 'float32'. */
      baseQuantization?: BaseQuantization;
    };

export type PolicyServerOptions = ServedSource &
  Omit<PolicyContextOptions, 'policy'> & {
    /** Default 127.0.0.1. */
    host?: string;
    /** Default 8001; 0 = any free port. */
    port?: number;
    /** Web pages (scheme://host[:port]) allowed to call besides the server's own origin; other Origins are refused 403. Default none. */
    allowedOrigins?: string[];
  };

export interface PolicyServer {
  url: string;
  port: number;
  /** The policy generating the replies (the loaded BuiltinPolicy when the server was given a `model`). */
  policy: Policy;
  /** Strings every reply ends after: `turnEnds` as given, else a loaded checkpoint's `trainedStopStrings`. */
  turnEnds: readonly string[];
  /**
   * Stops listening and cuts open connections (their rows stop generating), waits for the running
   * batch to end, then releases what the server owns: the model it loaded from `model` (its
   * onnxruntime sessions). A policy the caller passed in is left as it is. Calling it again
   * waits for the same close.
   */
  close(): Promise<void>;
}

/**
 * Loads a model — a checkpoint or Hugging Face folder, a .gguf file or a pulled model's name
 * (model/model-sources.ts) — on the engine as a `BuiltinPolicy` with the model's tokenizer and
 * (when it has one) chat format. The caller owns it: `policy.model.release()` frees its sessions.
 * `baseQuantization` ('float32' default, 'int8', 'int4') is how its generation session holds the
 * base's matmuls (ModelOptions); an unknown value is refused before the checkpoint is read.
 */
export async function loadServedPolicy(
  source: string,
  options: { baseQuantization?: BaseQuantization } = {},
): Promise<BuiltinPolicy> {
  return (await loadServedModel(source, options)).policy;
}

/** `loadServedPolicy`, with the stop strings the checkpoint was trained with (`trainedStopStrings`). */
async function loadServedModel(
  source: string,
  options: { baseQuantization?: BaseQuantization },
): Promise<{ policy: BuiltinPolicy; stopStrings: string[] }> {
  const { baseQuantization = 'float32' } = options;
  if (!baseQuantizations.includes(baseQuantization))
    throw new InvalidArgumentError(
      `baseQuantization must be one of ${baseQuantizations.join(', ')}; got ${String(baseQuantization)}`,
      { baseQuantization },
    );
  const checkpoint = await loadModelCheckpoint(source);
  const stopStrings = trainedStopStrings(checkpoint.extra, source);
  const model = await TransformerModel.fromParams(checkpoint.config, checkpoint.params, { baseQuantization });
  const { chatFormat, tokenizer } = checkpoint;
  try {
    const policy = new BuiltinPolicy({
      model,
      ...(chatFormat === undefined ? {} : { chatFormat }),
      ...(tokenizer === undefined || chatFormat !== undefined ? {} : { tokenizer }),
    });
    return { policy, stopStrings };
  } catch (error) {
    await model.release(); // a tokenizer that does not fit the model: nothing keeps the sessions
    throw error;
  }
}

/**
 * The stop strings a checkpoint's rollouts ended at (`stopStrings` in its agentrl metadata, written
 * by `agentrl train`); none for a checkpoint without them (a pulled model, an older checkpoint).
 */
export function trainedStopStrings(extra: Record<string, unknown>, source: string): string[] {
  const value = extra.stopStrings;
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((item) => typeof item === 'string' && item !== ''))
    throw new CheckpointError(`${source}: metadata "stopStrings" is not a list of non-empty strings`, {
      source,
      stopStrings: value,
    });
  return value;
}

/** Serves `policy` (or the model loaded from `model`) on the OpenAI endpoints until `close()`. */
export async function startPolicyServer(options: PolicyServerOptions): Promise<PolicyServer> {
  const {
    host = '127.0.0.1',
    port = 8001,
    allowedOrigins,
    policy: given,
    model: source,
    baseQuantization,
    ...contextOptions
  } = options;
  if (given !== undefined && baseQuantization !== undefined)
    throw new InvalidArgumentError(
      'startPolicyServer: baseQuantization applies to a model it loads ({ model }); a policy passed in keeps its own',
      { baseQuantization },
    );
  const owned = given === undefined ? await loadServedModel(source, { baseQuantization }) : undefined;
  const policy = given ?? owned?.policy;
  if (policy === undefined) throw new InvalidArgumentError('startPolicyServer needs a policy or a model source');
  const release = async (): Promise<void> => {
    await owned?.policy.model.release();
  };
  let context: PolicyContext;
  let listening: ListeningApp;
  try {
    // A loaded checkpoint's replies end where its training's did, unless the caller says otherwise.
    context = createPolicyContext({
      ...contextOptions,
      turnEnds: contextOptions.turnEnds ?? owned?.stopStrings,
      policy,
    });
    listening = await listenApp(policyApp(context), { host, port, allowedOrigins });
  } catch (error) {
    await release();
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    url: listening.url,
    port: listening.port,
    policy,
    turnEnds: context.turnEnds,
    close: () => {
      closed ??= (async () => {
        await listening.close();
        await context.batcher.close();
        await release();
      })();
      return closed;
    },
  };
}
