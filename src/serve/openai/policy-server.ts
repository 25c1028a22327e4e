/**
 * An OpenAI-compatible server for a trained built-in policy (`agentrl serve-policy <checkpoint>`),
 * so any OpenAI client (the `openai` SDK, the Vercel AI SDK, LangChain, curl) can use it:
 *
 *   POST /v1/chat/completions   messages → choices[].message {content, tool_calls}; stream (SSE),
 *                               n, stop, seed, max_tokens / max_completion_tokens, logprobs,
 *                               tools + tool_choice 'auto' | 'none' (tool-format.ts)
 *   POST /v1/completions        prompt (string, strings, ids) → choices[].text; stream, echo, logprobs: 0
 *   GET  /v1/models, /v1/models/{id}, /health
 *
 * Concurrent requests are batched (batcher.ts): requests arriving within `batchWindowMs` that
 * share their sampling options run as one batched generation (one forward pass per token for all
 * rows). Streaming sends each token's text as it is sampled: the generation yields to the event
 * loop between tokens (model/generate.ts), so chunks leave as they are made and `/health` and new
 * requests are answered while a batch runs (a request arriving mid-batch joins the next batch,
 * there is no continuous batching). Log-probs are those of the sampled
 * tokens under the temperature-scaled distribution (what the trainer's old log-probs are); top
 * alternatives are not computed (`top_logprobs` > 0 is a 400). `tool_choice: 'required'` or a
 * named function cannot be enforced on a free-running model and are treated like 'auto'.
 * Special tokens a model samples mid-reply are left out of the text (vLLM's default), the stop
 * token `<|end|>` included; they still count in `usage`, and `logprobs` lists every sampled id but the final stop token.
 * Completion prompts given as text get `<|bos|>` in front, as every training sequence had.
 * Errors use OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
 *
 * With a model's own chat format (`chatFormat`, src/chat: a SmolLM2, Qwen or Llama-3 checkpoint
 * with its tokenizer.json and Jinja template) the prompt is rendered in it, tools included, the
 * reply stops at its stop ids and tool calls are read in its family's format (SmolLM2
 * `<tool_call>[…]`, Qwen `<tool_call>{…}`); agentrl's byte template otherwise. The endpoints are
 * Hono routes (policy-routes.ts), one handler per endpoint; the state they share is
 * policy-context.ts.
 */
import { OnnxInference } from '../../engine/onnx/onnx-inference.ts';
import type { ChatFormat } from '../../chat/chat-format.ts';
import { generate } from '../../model/generate.ts';
import { loadModelCheckpoint } from '../../model/model-sources.ts';
import { TransformerModel } from '../../model/model.ts';
import { byteTokenizer, type Tokenizer } from '../../chat/tokenizer.ts';
import { decodeGenerated } from '../../policy/request.ts';
import { listenApp } from '../hono-server.ts';
import type { TokenGenerator } from './batcher.ts';
import { createPolicyContext, type PolicyContextOptions } from './policy-context.ts';
import { policyApp } from './policy-routes.ts';

export type { FinishedChat } from './chat-completions.ts';

export interface PolicyServerOptions extends PolicyContextOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8001; 0 = any free port. */
  port?: number;
  /** Web pages (scheme://host[:port]) allowed to call besides the server's own origin; other Origins are refused 403. Default none. */
  allowedOrigins?: string[];
}

export interface PolicyServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface ServedPolicy {
  generate: TokenGenerator;
  tokenizer: Tokenizer;
  /** The checkpoint's own chat format, when its folder has a model's tokenizer and chat template. */
  chatFormat?: ChatFormat;
  contextWindow: number;
  model: TransformerModel;
}

export type ServeEngine = 'auto' | 'jax' | 'onnx';

/**
 * Loads a model — a checkpoint or Hugging Face folder, a .gguf file or a pulled model's name
 * (model/model-sources.ts) — as the server's generator, tokenizer and (when it has one) chat
 * format. `engine` 'auto' generates on onnxruntime for a real model (its own chat format; 10–20×
 * faster than jax-js at that size) and on jax-js for the byte models.
 */
export async function loadServedPolicy(
  source: string,
  { engine = 'auto' }: { engine?: ServeEngine } = {},
): Promise<ServedPolicy & { engine: 'jax' | 'onnx' }> {
  const checkpoint = await loadModelCheckpoint(source);
  const model = await TransformerModel.fromParams(checkpoint.config, checkpoint.params);
  const chatFormat = checkpoint.chatFormat;
  const tokenizer = chatFormat?.tokenizer ?? checkpoint.tokenizer ?? byteTokenizer;
  const chosen = engine === 'auto' ? (chatFormat === undefined ? 'jax' : 'onnx') : engine;
  const generate =
    chosen === 'onnx'
      ? onnxGenerator(await OnnxInference.fromModel(model), tokenizer)
      : builtinGenerator(model, tokenizer);
  return {
    generate,
    tokenizer,
    ...(chatFormat === undefined ? {} : { chatFormat }),
    contextWindow: model.config.maxSeqLen,
    model,
    engine: chosen,
  };
}

/** onnxruntime as the server's generator: the same sampler and options as `builtinGenerator`. */
function onnxGenerator(inference: OnnxInference, tokenizer: Tokenizer): TokenGenerator {
  return (prompts, options) =>
    inference.generate(prompts, {
      ...options,
      decode: (ids) => decodeGenerated(tokenizer, ids),
      maxTokenId: tokenizer.vocabSize,
    });
}

/** The built-in model as the server's generator (spare vocabulary ids are never sampled). */
export function builtinGenerator(model: TransformerModel, tokenizer: Tokenizer): TokenGenerator {
  return (prompts, options) =>
    generate(model, prompts, {
      ...options,
      decode: (ids) => decodeGenerated(tokenizer, ids),
      maxTokenId: tokenizer.vocabSize,
    });
}

export async function startPolicyServer(options: PolicyServerOptions): Promise<PolicyServer> {
  const { host = '127.0.0.1', port = 8001, allowedOrigins, ...contextOptions } = options;
  const listening = await listenApp(policyApp(createPolicyContext(contextOptions)), { host, port, allowedOrigins });
  return { url: listening.url, port: listening.port, close: listening.close };
}
