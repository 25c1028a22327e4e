/**
 * A loopback Tinker server for the client's tests: it answers as the SDK 0.38 protocol says
 * (futures, protobuf forward_backward, sampling sessions, create-via-load) and logs every request,
 * refusing what the SDK would not send — a forward_backward that is not protobuf, a seq_id out of
 * order, load_weights that is not a model's first request, a POST without an idempotency key. Its
 * numbers are deterministic stand-ins (log-prob of a target = −0.1·(position + 1)); the real-peer
 * checks are `npm run check:tinker`'s.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as zlib from 'node:zlib';
import { littleEndian, readFields } from './protobuf-wire.ts';

export interface LoggedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** JSON body, or the decoded fields of a protobuf forward_backward. */
  body: Record<string, unknown>;
}

interface DecodedDatum {
  tokens: number[];
  inputs: Record<string, number[]>;
}

/** The fields of a protobuf ForwardBackwardRequest (only what the tests read). */
export function decodeForwardBackwardRequest(bytes: Uint8Array): Record<string, unknown> {
  const fields = readFields(bytes);
  const text = (value: Uint8Array | undefined) => new TextDecoder().decode(value ?? new Uint8Array());
  const data: DecodedDatum[] = fields
    .filter((field) => field.number === 3)
    .map((field) => {
      const datum = readFields(field.bytes ?? new Uint8Array());
      const tokens = datum
        .filter((entry) => entry.number === 1)
        .flatMap((chunk) =>
          readFields(chunk.bytes ?? new Uint8Array()).flatMap((text) => readFields(text.bytes ?? new Uint8Array())),
        )
        .flatMap((tokenField) => littleEndian(tokenField.bytes ?? new Uint8Array(), 'int32'));
      const inputs: Record<string, number[]> = {};
      for (const entry of datum.filter((item) => item.number === 2)) {
        const [key, value] = readFields(entry.bytes ?? new Uint8Array());
        const tensor = readFields(value?.bytes ?? new Uint8Array());
        const dtype = Number(tensor.find((item) => item.number === 3)?.varint ?? 0n);
        inputs[text(key?.bytes)] = littleEndian(
          tensor.find((item) => item.number === 1)?.bytes ?? new Uint8Array(),
          dtype === 2 ? 'int64' : 'float32',
        );
      }
      return { tokens, inputs };
    });
  const config: Record<string, number> = {};
  for (const entry of fields.filter((field) => field.number === 5)) {
    const [key, value] = readFields(entry.bytes ?? new Uint8Array());
    config[text(key?.bytes)] = littleEndian(value?.bytes ?? new Uint8Array(8), 'float64')[0] ?? 0;
  }
  return {
    model_id: text(fields.find((field) => field.number === 1)?.bytes),
    seq_id: Number(fields.find((field) => field.number === 2)?.varint ?? 0n),
    data,
    loss_fn: text(fields.find((field) => field.number === 4)?.bytes),
    loss_fn_config: config,
    forward_only: (fields.find((field) => field.number === 6)?.varint ?? 0n) === 1n,
  };
}

/** The request body, zstd-decompressed when it says so and this Node can (22.15+); a Content-Encoding it cannot read throws (a refusal). */
function readBody(bytes: Buffer, encoding: string | undefined): Uint8Array {
  if (encoding === undefined) return new Uint8Array(bytes);
  const zstd = (zlib as { zstdDecompressSync?: (input: Uint8Array) => Buffer }).zstdDecompressSync;
  if (encoding !== 'zstd' || zstd === undefined) throw new TypeError(`Content-Encoding ${encoding} not accepted`);
  return new Uint8Array(zstd(bytes));
}

export interface FakeServer {
  baseUrl: string;
  log: LoggedRequest[];
  /** Errors the server answered 400 for (the tests expect none). */
  refusals: string[];
  /** Requests applied, by kind (a replayed idempotency key is not applied again). */
  applied: Record<string, number>;
  close(): Promise<void>;
}

export interface FakeServerOptions {
  /** Answer the client/config handshake with these flags (404 when undefined: a server that predates it). */
  clientConfig?: Record<string, unknown>;
  /** Polls a forward_backward future answers try_again until an optim_step POST has arrived (pipelining check). */
  holdForwardBackwardForOptim?: boolean;
  /** Speak SkyRL 0.3.0's JSON instead: forward_backward as JSON, `/forward`, no create-via-load. */
  json?: boolean;
  /** Heartbeats answer this status (default 200). */
  heartbeatStatus?: number;
  /** Every sample's ids are these (a remote model's spare vocabulary row, say), instead of the seeded letters. */
  sampledTokens?: number[];
  /** Prompt log-probs without the first (null) entry, as SkyRL 0.3.0 answers. */
  promptLogprobsWithoutFirst?: boolean;
}

class FakeTinker {
  readonly log: LoggedRequest[] = [];
  readonly refusals: string[] = [];
  readonly applied: Record<string, number> = {};
  private readonly futures = new Map<string, { result: unknown; kind: string }>();
  private readonly byKey = new Map<string, unknown>();
  private readonly models = new Map<string, { lastSeq: number; requests: number }>();
  private optimArrived = false;
  private nextFuture = 0;
  private nextSampling = 0;
  private nextSession = 0;

  constructor(private readonly options: FakeServerOptions) {}

  private future(result: unknown, kind: string): { request_id: string } {
    const id = `f${this.nextFuture++}`;
    this.futures.set(id, { result, kind });
    return { request_id: id };
  }

  private sequenced(modelId: string, seqId: unknown): string | undefined {
    const model = this.models.get(modelId);
    if (model === undefined) return `unknown model ${modelId}`;
    if (typeof seqId !== 'number' || seqId !== model.lastSeq + 1)
      return `seq_id ${String(seqId)} after ${model.lastSeq} on ${modelId}`;
    model.lastSeq = seqId;
    model.requests += 1;
    return undefined;
  }

  trainingRoute(
    path: string,
    body: Record<string, unknown>,
    headers: IncomingMessage['headers'],
  ): [number, unknown] | undefined {
    const modelId = String(body.model_id ?? '');
    switch (path) {
      case '/api/v1/create_model': {
        const id = `${String(body.session_id)}:train:${String(body.model_seq_id)}`;
        this.models.set(id, { lastSeq: 0, requests: 0 });
        return [200, this.future({ model_id: id, type: 'create_model' }, 'create_model')];
      }
      case '/api/v1/load_weights': {
        if (body.optimizer === undefined) return [400, { detail: 'optimizer: Field required' }];
        if (body.session_id !== undefined && this.options.json === true)
          return [400, { detail: 'model_id: Field required' }];
        if (body.session_id !== undefined) {
          const id = `${String(body.session_id)}:train:${String(body.model_seq_id)}`;
          if (this.models.has(id)) return [400, { detail: `load_weights only as the first request of ${id}` }];
          this.models.set(id, { lastSeq: 0, requests: 1 });
          return [200, this.future({ type: 'load_weights', path: body.path }, 'load_weights')];
        }
        const model = this.models.get(modelId);
        if (model === undefined || model.requests !== 0)
          return [400, { detail: `load_weights only as the first request of ${modelId}` }];
        const problem = this.sequenced(modelId, body.seq_id);
        return problem === undefined
          ? [200, this.future({ type: 'load_weights' }, 'load_weights')]
          : [400, { detail: problem }];
      }
      case '/api/v1/forward':
      case '/api/v1/forward_backward': {
        const protobuf = String(headers['content-type']).includes('application/x-protobuf');
        if (protobuf === (this.options.json === true))
          return [415, { detail: `forward_backward is ${this.options.json === true ? 'JSON' : 'protobuf'} here` }];
        if (path === '/api/v1/forward' && this.options.json !== true)
          return [404, { detail: 'no /forward: forward_only' }];
        const problem = this.sequenced(modelId, body.seq_id);
        if (problem !== undefined) return [400, { detail: problem }];
        const input = (body.forward_backward_input ?? body.forward_input) as
          | { data: { model_input: { chunks: { tokens: number[] }[] } }[] }
          | undefined;
        const data: DecodedDatum[] = protobuf
          ? (body.data as DecodedDatum[])
          : (input?.data ?? []).map((datum) => ({
              tokens: datum.model_input.chunks.flatMap((chunk) => chunk.tokens),
              inputs: {},
            }));
        if (!protobuf) body.forward_only = path === '/api/v1/forward';
        const outputs = data.map((datum) => ({
          logprobs: { data: datum.tokens.map((_, index) => -0.1 * (index + 1)), dtype: 'float32' },
        }));
        return [
          200,
          this.future(
            { loss_fn_output_type: 'ArrayRecord', loss_fn_outputs: outputs, metrics: { 'loss:sum': 1 } },
            body.forward_only === true ? 'forward' : 'forward_backward',
          ),
        ];
      }
      case '/api/v1/optim_step': {
        const problem = this.sequenced(modelId, body.seq_id);
        if (problem !== undefined) return [400, { detail: problem }];
        this.optimArrived = true;
        return [200, this.future({ metrics: { grad_norm: 0.5 } }, 'optim_step')];
      }
      case '/api/v1/save_weights':
      case '/api/v1/save_weights_for_sampler': {
        const problem = this.sequenced(modelId, body.seq_id);
        if (problem !== undefined) return [400, { detail: problem }];
        const kind = path.endsWith('sampler') ? 'sampler_weights' : 'weights';
        return [200, this.future({ path: `tinker://${modelId}/${kind}/${String(body.path)}` }, kind)];
      }
      default:
        return undefined;
    }
  }

  route(path: string, body: Record<string, unknown>, headers: IncomingMessage['headers']): [number, unknown] {
    const modelId = String(body.model_id ?? '');
    switch (path) {
      case '/api/v1/client/config':
        return this.options.clientConfig === undefined
          ? [404, { detail: 'Not Found' }]
          : [200, this.options.clientConfig];
      case '/api/v1/create_session':
        return [
          200,
          { type: 'create_session', session_id: this.nextSession++ === 0 ? 'sess' : `sess${this.nextSession - 1}` },
        ];
      case '/api/v1/session_heartbeat':
        return [this.options.heartbeatStatus ?? 200, { type: 'session_heartbeat' }];
      case '/api/v1/create_sampling_session':
        return [200, { type: 'create_sampling_session', sampling_session_id: `ss${this.nextSampling++}` }];
      case '/api/v1/asample': {
        const count = Number(body.num_samples);
        const params = body.sampling_params as { max_tokens: number; seed: number };
        const prompt = (body.prompt as { chunks: { tokens: number[] }[] }).chunks.flatMap((chunk) => chunk.tokens);
        const fixed = this.options.sampledTokens?.slice(0, params.max_tokens);
        const sequences = Array.from({ length: count }, (_, index) => ({
          tokens:
            fixed ??
            Array.from({ length: params.max_tokens }, (_, position) => 65 + ((params.seed + index + position) % 26)),
          logprobs: Array.from({ length: fixed?.length ?? params.max_tokens }, () => -1),
          stop_reason: 'length',
        }));
        const all = prompt.map((_, index) => (index === 0 ? null : -0.25 * index));
        const promptLogprobs =
          body.prompt_logprobs !== true ? null : this.options.promptLogprobsWithoutFirst === true ? all.slice(1) : all;
        return [200, this.future({ sequences, prompt_logprobs: promptLogprobs }, 'sample')];
      }
      case '/api/v1/unload_model':
        return [200, this.future({ model_id: modelId, type: 'unload_model' }, 'unload_model')];
      case '/api/v1/retrieve_future': {
        const entry = this.futures.get(String(body.request_id));
        if (entry === undefined) return [404, { detail: 'unknown this.future' }];
        if (
          this.options.holdForwardBackwardForOptim === true &&
          entry.kind === 'forward_backward' &&
          !this.optimArrived
        )
          return [200, { type: 'try_again', request_id: body.request_id, queue_state: 'active' }];
        return [200, entry.result];
      }
      default: {
        const training = this.trainingRoute(path, body, headers);
        if (training !== undefined) return training;
        if (path.startsWith('/api/v1/training_runs/')) return [200, {}];
        return [404, { detail: `no this.route ${path}` }];
      }
    }
  }

  handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = readBody(Buffer.concat(chunks), request.headers['content-encoding']);
      const path = (request.url ?? '').split('?')[0] ?? '';
      let body: Record<string, unknown> = {};
      try {
        if (String(request.headers['content-type']).includes('application/x-protobuf'))
          body = decodeForwardBackwardRequest(raw);
        else if (raw.length > 0) body = JSON.parse(Buffer.from(raw).toString()) as Record<string, unknown>;
      } catch (error) {
        this.refusals.push(`${path}: unreadable body (${(error as Error).message})`);
      }
      this.log.push({ method: request.method ?? '', path, headers: request.headers, body });
      const key = request.headers['x-idempotency-key'];
      let status: number;
      let answer: unknown;
      if (request.method !== 'GET' && typeof key !== 'string')
        [status, answer] = [400, { detail: 'no X-Idempotency-Key' }];
      else if (typeof key === 'string' && this.byKey.has(key) && path !== '/api/v1/retrieve_future')
        [status, answer] = [200, this.byKey.get(key)];
      else {
        [status, answer] = this.route(path, body, request.headers);
        if (status === 200 && typeof key === 'string' && path !== '/api/v1/retrieve_future') {
          this.byKey.set(key, answer);
          const kind = path.replace('/api/v1/', '');
          this.applied[kind] = (this.applied[kind] ?? 0) + 1;
        }
      }
      if (status === 400) this.refusals.push(`${path}: ${JSON.stringify(answer)}`);
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(answer));
    });
  }
}

export async function startFakeServer(options: FakeServerOptions = {}): Promise<FakeServer> {
  const fake = new FakeTinker(options);
  const server = createServer((request, response) => fake.handle(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    log: fake.log,
    refusals: fake.refusals,
    applied: fake.applied,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
