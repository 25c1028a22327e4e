/**
 * The gateway's sessions: each holds its recorded calls until it is finished (taken as a
 * trajectory) or dropped. A session with no call in flight and no activity for `timeoutMs` is
 * dropped as timed out (counted); its `dropped` promise says so to whoever waits on it.
 */
import { finalMessages, type RecordedCall } from './session-trajectory.ts';
import type { Message } from '../../core/types.ts';

/** Per-session sampling the trainer imposes (the rollout temperature, the reply budget). */
export interface SessionSettings {
  /** Replaces the request's temperature (old log-probs must be of the trainer's temperature). */
  temperature?: number;
  /** Caps max_tokens / max_completion_tokens. */
  maxTokens?: number;
}

/** Why a session ended without a trajectory ('closed': still open when the gateway closed). */
export type DropReason = 'timeout' | 'agent-error' | 'no-reward' | 'reward-error' | 'no-calls' | 'closed';

export interface Session {
  readonly id: string;
  readonly settings: SessionSettings;
  /** Opened by the trainer (`open`), not created by a client's first call. */
  readonly owned: boolean;
  /** A client-opened session's secret (SHA-256): later calls and a changed reward must present it (session-secret.ts). */
  readonly secretHash?: Buffer;
  readonly calls: RecordedCall[];
  inFlight: number;
  lastActivity: number;
  reward?: { reward: number; success: boolean };
  /** Resolves when the session is dropped. */
  readonly dropped: Promise<DropReason>;
}

export interface FinishedSession {
  id: string;
  calls: RecordedCall[];
  messages: Message[];
  reward?: { reward: number; success: boolean };
}

export interface GatewayMetrics {
  sessionsOpened: number;
  sessionsFinished: number;
  /** Sessions dropped because they went idle past the timeout. */
  sessionsTimedOut: number;
  /** Sessions dropped for any other reason (agent error, no reward, reward error, no calls, still open at close). */
  sessionsDropped: number;
  /** Calls recorded. */
  calls: number;
  /** Calls whose client left before the whole response was sent (not recorded). */
  callsAbandoned: number;
  /** Calls (of finished sessions) whose prompt did not extend the previous prompt + completion. */
  prefixBreaks: number;
}

const endedIdsKept = 10_000;

export class SessionStore {
  readonly metrics: GatewayMetrics = {
    sessionsOpened: 0,
    sessionsFinished: 0,
    sessionsTimedOut: 0,
    sessionsDropped: 0,
    calls: 0,
    callsAbandoned: 0,
    prefixBreaks: 0,
  };
  private readonly sessions = new Map<string, Session & { drop(reason: DropReason): void }>();
  /** Recently ended ids: a late call to one is refused instead of opening a stray session. */
  private readonly ended = new Set<string>();
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor({ timeoutMs, now = Date.now }: { timeoutMs: number; now?: () => number }) {
    this.timeoutMs = timeoutMs;
    this.now = now;
  }

  /** Opens a session for the trainer or, with the hash of its secret, for the client whose call named it. */
  open(id: string, settings: SessionSettings = {}, clientSecretHash?: Buffer): Session {
    const existing = this.sessions.get(id);
    if (existing !== undefined) return existing;
    let drop!: (reason: DropReason) => void;
    const dropped = new Promise<DropReason>((resolve) => (drop = resolve));
    const session = {
      id,
      settings,
      owned: clientSecretHash === undefined,
      ...(clientSecretHash === undefined ? {} : { secretHash: clientSecretHash }),
      calls: [],
      inFlight: 0,
      lastActivity: this.now(),
      dropped,
      drop,
    };
    this.sessions.set(id, session);
    this.ended.delete(id);
    this.metrics.sessionsOpened++;
    return session;
  }

  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  hasEnded(id: string): boolean {
    return this.ended.has(id);
  }

  touch(session: Session): void {
    session.lastActivity = this.now();
  }

  record(session: Session, call: RecordedCall): void {
    if (this.sessions.get(session.id) !== session) return; // dropped meanwhile
    session.calls.push(call);
    this.metrics.calls++;
    this.touch(session);
  }

  /** Removes the session and hands over what it recorded. */
  finish(id: string, prefixBreaks: (calls: RecordedCall[]) => number): FinishedSession | undefined {
    const session = this.sessions.get(id);
    if (session === undefined) return undefined;
    this.forget(id);
    this.metrics.sessionsFinished++;
    this.metrics.prefixBreaks += prefixBreaks(session.calls);
    return { id, calls: session.calls, messages: finalMessages(session.calls), reward: session.reward };
  }

  /** Removes a session its opening call failed to use (nothing recorded, nothing in flight): as if never opened. */
  discardUnused(session: Session): void {
    if (this.sessions.get(session.id) !== session || session.calls.length > 0 || session.inFlight > 0) return;
    this.sessions.delete(session.id);
    this.metrics.sessionsOpened--;
  }

  drop(id: string, reason: DropReason): void {
    const session = this.sessions.get(id);
    if (session === undefined) return;
    this.forget(id);
    if (reason === 'timeout') this.metrics.sessionsTimedOut++;
    else this.metrics.sessionsDropped++;
    session.drop(reason);
  }

  /** Drops every session idle past the timeout; returns their ids. */
  sweep(): string[] {
    const expired = [...this.sessions.values()]
      .filter((session) => session.inFlight === 0 && this.now() - session.lastActivity > this.timeoutMs)
      .map((session) => session.id);
    for (const id of expired) this.drop(id, 'timeout');
    return expired;
  }

  /** Drops every open session (the gateway is closing). */
  dropAll(reason: DropReason): void {
    for (const id of [...this.sessions.keys()]) this.drop(id, reason);
  }

  /** Client-created sessions that have their reward (POST /v1/sessions/{id}/reward). */
  rewardedUnowned(): Session[] {
    return [...this.sessions.values()].filter((session) => !session.owned && session.reward !== undefined);
  }

  private forget(id: string): void {
    this.sessions.delete(id);
    this.ended.add(id);
    if (this.ended.size > endedIdsKept) this.ended.delete(this.ended.values().next().value!);
  }
}
