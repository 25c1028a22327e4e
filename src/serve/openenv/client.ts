/**
 * A TypeScript client for the OpenEnv protocol (any OpenEnv server, agentrl's included).
 *
 *   const client = new OpenEnvClient('http://127.0.0.1:8000');
 *   const session = await client.session();             // WebSocket /ws: one env instance
 *   let result = await session.reset({ seed: 3 });
 *   result = await session.step({ text: '<answer>Right</answer>' });
 *   await session.close();
 *
 * Server errors become `OpenEnvError` with the protocol's code (`protocolCode`: CAPACITY_REACHED,
 * VALIDATION_ERROR, …, or `HTTP_<status>` for HTTP calls) and the server's data in `details`.
 */
import WebSocket from 'ws';
import { AgentRlError } from '../../core/errors.ts';
import type { JsonRpcResponse } from './mcp.ts';
import type { WireResult } from './wire.ts';

export class OpenEnvError extends AgentRlError {
  readonly protocolCode: string;
  constructor(protocolCode: string, message: string, details: Record<string, unknown> = {}) {
    super('OPENENV', `${protocolCode}: ${message}`, { protocolCode, ...details });
    this.protocolCode = protocolCode;
  }
}

/** The action as sent: `text`, and optionally a structured `tool_call`. */
export interface WireActionInput {
  text: string;
  tool_call?: { id?: string; name: string; arguments?: Record<string, unknown> };
  metadata?: Record<string, unknown>;
}

export interface OpenEnvClientOptions {
  /** Milliseconds a request (HTTP or one WebSocket exchange) may take. Default 60 000. */
  timeoutMs?: number;
}

export class OpenEnvClient {
  readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(baseUrl: string, { timeoutMs = 60_000 }: OpenEnvClientOptions = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = timeoutMs;
  }

  health(): Promise<{ status: string }> {
    return this.request('GET', '/health') as Promise<{ status: string }>;
  }
  metadata(): Promise<Record<string, unknown>> {
    return this.request('GET', '/metadata') as Promise<Record<string, unknown>>;
  }
  schema(): Promise<{ action: unknown; observation: unknown; state: unknown }> {
    return this.request('GET', '/schema') as Promise<{ action: unknown; observation: unknown; state: unknown }>;
  }
  state(): Promise<Record<string, unknown>> {
    return this.request('GET', '/state') as Promise<Record<string, unknown>>;
  }
  /** Stateless reset (a fresh env on the server). */
  reset(request: Record<string, unknown> = {}): Promise<WireResult> {
    return this.request('POST', '/reset', request) as Promise<WireResult>;
  }
  /** Stateless step: on agentrl servers, the first step of the episode of `seed` (default 0). */
  step(action: WireActionInput, extra: Record<string, unknown> = {}): Promise<WireResult> {
    return this.request('POST', '/step', { action, ...extra }) as Promise<WireResult>;
  }
  /** One JSON-RPC request to POST /mcp. */
  mcp(method: string, params: Record<string, unknown> = {}, id: number | string = 1): Promise<JsonRpcResponse> {
    return this.request('POST', '/mcp', { jsonrpc: '2.0', id, method, params }) as Promise<JsonRpcResponse>;
  }

  /** Opens a WebSocket session (one environment instance on the server). */
  session(): Promise<OpenEnvSession> {
    const url = `${this.baseUrl.replace(/^http/, 'ws')}/ws`;
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const fail = (error: Error): void =>
        reject(new OpenEnvError('CONNECTION_ERROR', `${url}: ${error.message}`, { url }));
      ws.once('error', fail);
      ws.once('open', () => {
        ws.off('error', fail);
        resolve(new OpenEnvSession(ws, this.timeoutMs));
      });
    });
  }

  private async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const url = `${this.baseUrl}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      throw new OpenEnvError('CONNECTION_ERROR', `${method} ${url}: ${(error as Error).message}`, { url });
    }
    const text = await response.text();
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new OpenEnvError(`HTTP_${response.status}`, `${method} ${url}: not JSON: ${text.slice(0, 200)}`, { url });
    }
    if (!response.ok) {
      const detail = (value as { detail?: unknown }).detail;
      throw new OpenEnvError(
        `HTTP_${response.status}`,
        `${method} ${url}: ${typeof detail === 'string' ? detail : JSON.stringify(detail)}`,
        { url, detail },
      );
    }
    return value;
  }
}

interface Pending {
  resolve(value: { type: string; data: unknown }): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * One WebSocket session. Requests may be issued concurrently; the server answers them in order,
 * so replies are matched first-in first-out.
 */
export class OpenEnvSession {
  private readonly ws: WebSocket;
  private readonly timeoutMs: number;
  private readonly pending: Pending[] = [];
  /** Set once the session is unusable (an unsolicited server error, or the socket closed). */
  private failure: OpenEnvError | null = null;

  constructor(ws: WebSocket, timeoutMs: number) {
    this.ws = ws;
    this.timeoutMs = timeoutMs;
    ws.on('message', (raw) => this.onMessage(raw.toString()));
    ws.on('close', (code, reason) => {
      this.failure ??= new OpenEnvError(
        'SESSION_ERROR',
        `connection closed (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`,
      );
      for (const entry of this.pending.splice(0)) {
        clearTimeout(entry.timer);
        entry.reject(this.failure);
      }
    });
    ws.on('error', () => {});
  }

  get open(): boolean {
    return this.failure === null && this.ws.readyState === WebSocket.OPEN;
  }

  async reset(data: Record<string, unknown> = {}): Promise<WireResult> {
    return (await this.exchange({ type: 'reset', data }, 'observation')) as WireResult;
  }
  async step(action: WireActionInput): Promise<WireResult> {
    return (await this.exchange({ type: 'step', data: action }, 'observation')) as WireResult;
  }
  async state(): Promise<Record<string, unknown>> {
    return (await this.exchange({ type: 'state' }, 'state')) as Record<string, unknown>;
  }
  async mcp(method: string, params: Record<string, unknown> = {}, id: number | string = 1): Promise<JsonRpcResponse> {
    return (await this.exchange(
      { type: 'mcp', data: { jsonrpc: '2.0', id, method, params } },
      'mcp',
    )) as JsonRpcResponse;
  }

  /** Sends `{"type":"close"}` and waits for the socket to close. */
  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.ws.once('close', () => resolve()));
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ type: 'close' }));
    else this.ws.terminate();
    await closed;
  }

  /** Sends one message and waits for its reply; an error reply rejects with `OpenEnvError`. */
  private async exchange(message: Record<string, unknown>, expected: string): Promise<unknown> {
    if (this.failure !== null) throw this.failure;
    const reply = await new Promise<{ type: string; data: unknown }>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.failure = new OpenEnvError('TIMEOUT', `no reply to ${String(message.type)} within ${this.timeoutMs} ms`);
        this.ws.terminate();
      }, this.timeoutMs);
      this.pending.push({ resolve, reject, timer });
      this.ws.send(JSON.stringify(message));
    });
    if (reply.type === 'error') throw errorOf(reply.data);
    if (reply.type !== expected)
      throw new OpenEnvError('PROTOCOL_ERROR', `expected a ${expected} reply, got ${reply.type}`);
    return reply.data;
  }

  private onMessage(text: string): void {
    let reply: { type: string; data: unknown };
    try {
      reply = JSON.parse(text) as { type: string; data: unknown };
    } catch {
      this.failure = new OpenEnvError('PROTOCOL_ERROR', `server sent invalid JSON: ${text.slice(0, 100)}`);
      this.ws.terminate();
      return;
    }
    const entry = this.pending.shift();
    if (entry === undefined) {
      // Unsolicited: capacity reached on connect, or the idle timeout; the server closes next.
      if (reply.type === 'error') this.failure = errorOf(reply.data);
      return;
    }
    clearTimeout(entry.timer);
    entry.resolve(reply);
  }
}

function errorOf(data: unknown): OpenEnvError {
  const { message = 'error', code = 'UNKNOWN', ...rest } = (data ?? {}) as { message?: string; code?: string };
  return new OpenEnvError(code, message, rest);
}
