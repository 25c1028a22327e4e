/**
 * The judge tests' two real servers on 127.0.0.1:
 * - `serveScriptedJudge(reply)`: agentrl's own OpenAI-compatible server (serve-policy's
 *   `startPolicyServer`, the real HTTP path and protocol) generating with a `ScriptedPolicy`, whose
 *   reply is a function of the chat the judge sent — a deterministic judge model;
 * - `serveRaw(handler)`: a bare node:http server for the failure paths (status codes, headers,
 *   hangs, huge or malformed bodies), recording each request body.
 * (A test fixture may import from src/serve; the judges themselves depend on core only.)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import type { Message } from '../../core/types.ts';
import { ScriptedPolicy } from '../../policy/scripted-policy.ts';
import { startPolicyServer } from '../../serve/openai/policy-server.ts';
import type { EpisodeContext } from '../episode-context.ts';

export interface ScriptedJudgeServer {
  /** The judge endpoint's baseURL (…/v1). */
  baseURL: string;
  /** The chats the judge model was asked, in order. */
  chats: Message[][];
}

/** serve-policy with a scripted judge model, started before the suite's tests and closed after them. */
export function serveScriptedJudgeDuringSuite(reply: (messages: Message[]) => string): ScriptedJudgeServer {
  const served: ScriptedJudgeServer = { baseURL: '', chats: [] };
  const policy = new ScriptedPolicy({
    reply: ({ messages }) => {
      served.chats.push(messages);
      return reply(messages);
    },
    contextWindow: 1 << 16,
  });
  let close = async () => {};
  before(async () => {
    const server = await startPolicyServer({
      policy,
      modelName: 'judge',
      port: 0,
      batchWindowMs: 1,
    });
    served.baseURL = `${server.url}/v1`;
    close = server.close;
  });
  after(() => close());
  return served;
}

export interface RawServer {
  baseURL: string;
  /** Each request's parsed JSON body, in arrival order. */
  bodies: Record<string, unknown>[];
  /** Each request's headers, in arrival order. */
  headers: IncomingMessage['headers'][];
  close(): Promise<void>;
}

export type RawHandler = (request: IncomingMessage, response: ServerResponse, index: number) => void;

/** A node:http server answering `/v1/chat/completions` with `handler(request, response, requestIndex)`. */
export async function serveRaw(handler: RawHandler): Promise<RawServer> {
  const bodies: Record<string, unknown>[] = [];
  const headers: IncomingMessage['headers'][] = [];
  const server = createServer((request, response) => {
    headers.push(request.headers);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      bodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      handler(request, response, bodies.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    bodies,
    headers,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A chat completion carrying `content`, with usage. */
export function completionBody(content: string, usage = { prompt_tokens: 100, completion_tokens: 10 }): string {
  return JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion',
    model: 'judge',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage,
  });
}

export function answer(response: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(body);
}

/** A finished episode: one turn per [action, observation] pair. */
export function episode(prompt: string, turns: readonly (readonly [string, string])[], seed = 0): EpisodeContext {
  return {
    prompt,
    trajectory: {
      tokens: [],
      lossMask: [],
      logprobs: [],
      tokenRewards: [],
      turns: turns.map(([action, observation]) => ({
        start: 0,
        end: 0,
        reward: 0,
        action,
        observation,
        invalidAction: false,
      })),
      totalReward: 0,
      success: false,
      groupId: 'g',
      seed,
      truncated: false,
    },
  };
}
