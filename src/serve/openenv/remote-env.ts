/**
 * Environments served elsewhere, as agentrl `Env`s: a pool of OpenEnv servers (`agentrl
 * serve-env` on other machines) behind one factory, so the rollout and the trainers run against
 * them unchanged.
 *
 *   const pool = await RemoteEnvPool.connect(['http://10.0.0.2:8000', 'http://10.0.0.3:8000']);
 *   await runRl({ env: () => pool.makeEnv(), ... });   // or rollout({ env: () => pool.makeEnv(), ... })
 *   await pool.close();
 *
 * Each `RemoteEnv` holds one WebSocket session (one env instance on a server), opened at its
 * first `reset` on the server with the fewest sessions from this pool that has a free slot (the
 * server's `max_sessions`; when all are full, `reset` rejects with `PoolFullError`: keep the
 * rollout's `concurrency` at most `pool.capacity`). `close()` ends the
 * session and frees the slot; the rollout calls it as each episode ends. Seeds, actions and
 * results travel unchanged (wire.ts), so an episode replays exactly as with the local env — all
 * but `observation.privileged` (the answer, hidden tests), which the server never sends. A
 * scripted expert needs it: wrap the env with a local copy that follows its episodes,
 *
 *   env: () => withPrivileged(pool.makeEnv(), makeEnv(pool.name, options))   // envs/with-privileged.ts
 */
import { AgentRlError, InvalidArgumentError } from '../../core/errors.ts';
import { at } from '../../core/indexing.ts';
import type { Action, Env, Observation, StepResult } from '../../core/types.ts';
import { runningEpisode } from '../../envs/episode-turns.ts';
import { OpenEnvClient, OpenEnvError, type OpenEnvClientOptions, type OpenEnvSession } from './client.ts';
import { deserializeObservation, deserializeStep, fromWireAction } from './wire.ts';

/** What `GET /agentrl/env` answers. */
export interface RemoteEnvInfo {
  name: string;
  description: string;
  instructions: string | null;
  tools: { name: string; description: string; inputSchema: unknown }[];
  max_sessions: number;
  session_timeout_s: number | null;
}

interface Server {
  client: OpenEnvClient;
  capacity: number;
  active: number;
}

export class RemoteEnvPool {
  readonly info: RemoteEnvInfo;
  private readonly servers: Server[];
  private readonly envs = new Set<RemoteEnv>();

  private constructor(info: RemoteEnvInfo, servers: Server[]) {
    this.info = info;
    this.servers = servers;
  }

  /** Reads every server's env description; they must all serve the same environment. */
  static async connect(urls: readonly string[], options: OpenEnvClientOptions = {}): Promise<RemoteEnvPool> {
    if (urls.length === 0) throw new InvalidArgumentError('RemoteEnvPool.connect needs at least one server URL');
    const clients = urls.map((url) => new OpenEnvClient(url, options));
    const infos = await Promise.all(
      clients.map(async (client) => {
        try {
          return (await (
            await fetch(`${client.baseUrl}/agentrl/env`, { signal: AbortSignal.timeout(options.timeoutMs ?? 60_000) })
          ).json()) as RemoteEnvInfo;
        } catch (error) {
          throw new OpenEnvError(
            'CONNECTION_ERROR',
            `${client.baseUrl}/agentrl/env: ${(error as Error).message} (is it an agentrl serve-env server?)`,
          );
        }
      }),
    );
    const names = [...new Set(infos.map((info) => info.name))];
    if (names.length > 1) {
      throw new InvalidArgumentError(
        `the servers serve different environments: ${urls.map((url, i) => `${url} → ${at(infos, i, 'server infos').name}`).join(', ')}`,
      );
    }
    return new RemoteEnvPool(
      at(infos, 0, 'server infos'),
      clients.map((client, i) => ({ client, capacity: at(infos, i, 'server infos').max_sessions, active: 0 })),
    );
  }

  get name(): string {
    return this.info.name;
  }

  /** Sessions this pool holds open now, per server URL. */
  activeSessions(): Record<string, number> {
    return Object.fromEntries(this.servers.map((server) => [server.client.baseUrl, server.active]));
  }

  /** A new remote env (no connection until its first `reset`). */
  makeEnv(): RemoteEnv {
    return new RemoteEnv(this);
  }

  /** Closes every session still open. */
  async close(): Promise<void> {
    await Promise.all([...this.envs].map((env) => env.close()));
  }

  /** Sessions the pool can hold at once (the servers' `max_sessions` summed): the largest useful rollout concurrency. */
  get capacity(): number {
    return this.servers.reduce((sum, server) => sum + server.capacity, 0);
  }

  /** @internal Opens a session on the least-loaded server with a free slot. */
  async openSession(env: RemoteEnv): Promise<{ session: OpenEnvSession; release: () => void }> {
    const free = this.servers.filter((server) => server.active < server.capacity);
    if (free.length === 0) {
      // Waiting here would deadlock a rollout that starts all its episodes before stepping any.
      throw new PoolFullError(this.capacity);
    }
    const server = free.reduce((best, candidate) => (candidate.active < best.active ? candidate : best));
    server.active++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      server.active--;
      this.envs.delete(env);
    };
    try {
      const session = await server.client.session();
      this.envs.add(env);
      return { session, release };
    } catch (error) {
      release();
      throw error;
    }
  }
}

/** Every server slot of the pool is in use. */
export class PoolFullError extends AgentRlError {
  constructor(capacity: number) {
    super(
      'POOL_FULL',
      `all ${capacity} sessions of the env server pool are in use; keep the rollout concurrency at most pool.capacity (${capacity}; runRl runs up to 64 episodes at once), close finished envs, or add servers / raise serve-env --max-sessions`,
      { capacity },
    );
  }
}

export class RemoteEnv implements Env {
  readonly name: string;
  readonly instructions?: string;
  private readonly pool: RemoteEnvPool;
  private connection: { session: OpenEnvSession; release: () => void } | null = null;
  /** The episode `reset` started on the connection's session; null before a reset and after `close`. */
  private episode: { session: OpenEnvSession; ended: boolean } | null = null;

  constructor(pool: RemoteEnvPool) {
    this.pool = pool;
    this.name = pool.info.name;
    if (pool.info.instructions !== null) this.instructions = pool.info.instructions;
  }

  async reset({ seed, task }: { seed: number; task?: unknown }): Promise<Observation> {
    this.connection ??= await this.pool.openSession(this);
    const { session } = this.connection;
    const wire = await session.reset(task === undefined ? { seed } : { seed, task });
    this.episode = { session, ended: false };
    return deserializeObservation(wire);
  }

  async step(action: Action): Promise<StepResult> {
    const episode = runningEpisode(this.name, this.episode);
    const result = deserializeStep(await episode.session.step(fromWireAction(action)));
    episode.ended = result.done || result.truncated;
    return result;
  }

  /** Ends the session on the server and frees its slot; a later `reset` opens a new one. */
  async close(): Promise<void> {
    const connection = this.connection;
    if (connection === null) return;
    this.connection = null;
    this.episode = null;
    try {
      await connection.session.close();
    } finally {
      connection.release();
    }
  }
}
