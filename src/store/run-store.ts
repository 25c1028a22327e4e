/**
 * The run store: one SQLite file (default `runs/agentrl.db`) holding every run's effective config,
 * per-step metrics, sampled trajectories, evaluations and checkpoints.
 *
 * - WAL journal: readers (the dashboard, `agentrl export`) never block the training process and
 *   always see whole transactions.
 * - Everything a training step produces is committed in one transaction (`recordStep`), so a
 *   process killed at any moment (even SIGKILL) leaves every committed step whole and nothing of
 *   the step it was in. `synchronous = NORMAL` makes commits survive a process crash; only a power
 *   loss can drop the last commits (SQLite's documented WAL trade-off).
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { AgentRlError } from '../core/errors.ts';
import { schemaSql, schemaVersion } from './schema.ts';
import type {
  CheckpointRecord,
  EvaluationRecord,
  MetricsRecord,
  NewRun,
  RunRecord,
  RunStatus,
  StepRecord,
  TrajectoryRecord,
} from './types.ts';

export const defaultStorePath = 'runs/agentrl.db';

/** A run id or name that the store does not have; the message lists the ones it has. */
export class RunNotFoundError extends AgentRlError {
  constructor(file: string, reference: string, known: readonly string[]) {
    const list = known.length > 0 ? `runs: ${known.join(', ')}` : 'it has no runs';
    super('RUN_NOT_FOUND', `${file}: no run "${reference}"; ${list}`, { file, reference, known });
  }
}

export interface OpenStoreOptions {
  /** Open for reading only (the dashboard, export). The file must exist. */
  readonly?: boolean;
}

type Row = Record<string, any>;

export class RunStore {
  readonly path: string;
  private readonly db: Database.Database;

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.db = db;
  }

  static open(path: string = defaultStorePath, { readonly = false }: OpenStoreOptions = {}): RunStore {
    if (!readonly) mkdirSync(dirname(path), { recursive: true });
    let db: Database.Database;
    try {
      db = new Database(path, { readonly, fileMustExist: readonly });
    } catch (error) {
      throw new AgentRlError('STORE', `${path}: cannot open the run store (${(error as Error).message})`, { file: path });
    }
    db.pragma('busy_timeout = 10000');
    if (!readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      const version = db.pragma('user_version', { simple: true }) as number;
      if (version > schemaVersion) {
        db.close();
        throw new AgentRlError('STORE', `${path}: written by a newer agentrl (schema ${version} > ${schemaVersion})`, { file: path });
      }
      db.exec(schemaSql);
      db.pragma(`user_version = ${schemaVersion}`);
    }
    return new RunStore(path, db);
  }

  close(): void {
    this.db.close();
  }

  // --- runs ------------------------------------------------------------------------------------

  createRun(run: NewRun): RunRecord {
    const now = new Date().toISOString();
    if (run.name !== undefined && this.db.prepare('SELECT 1 FROM runs WHERE name = ?').get(run.name) !== undefined) {
      throw new AgentRlError('STORE', `${this.path}: a run named "${run.name}" exists; pick another name or --resume it`, { file: this.path, name: run.name });
    }
    const create = this.db.transaction(() => {
      const info = this.db
        .prepare(
          `INSERT INTO runs (name, command, status, seed, git_commit, config, created_at, updated_at)
           VALUES (?, ?, 'running', ?, ?, ?, ?, ?)`,
        )
        .run(run.name ?? `pending-${now}-${process.pid}`, run.command, run.seed, run.gitCommit, JSON.stringify(run.config), now, now);
      const id = Number(info.lastInsertRowid);
      if (run.name === undefined) this.db.prepare('UPDATE runs SET name = ? WHERE id = ?').run(`${run.namePrefix ?? run.command}-${id}`, id);
      return id;
    });
    return this.run(String(create()));
  }

  /** Runs, newest first. */
  runs(): RunRecord[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY id DESC').all() as Row[]).map(runFromRow);
  }

  /** A run by id (`3`) or name. */
  run(reference: string | number): RunRecord {
    const text = String(reference);
    const row = (/^\d+$/.test(text) ? this.db.prepare('SELECT * FROM runs WHERE id = ?').get(Number(text)) : undefined) ??
      this.db.prepare('SELECT * FROM runs WHERE name = ?').get(text);
    if (row === undefined) {
      const known = (this.db.prepare('SELECT id, name FROM runs ORDER BY id').all() as Row[]).map((r) => `${r.id} (${r.name})`);
      throw new RunNotFoundError(this.path, text, known);
    }
    return runFromRow(row as Row);
  }

  setStatus(runId: number, status: RunStatus): void {
    this.db.prepare('UPDATE runs SET status = ?, updated_at = ? WHERE id = ?').run(status, new Date().toISOString(), runId);
  }

  setConfig(runId: number, config: Record<string, unknown>): void {
    this.db.prepare('UPDATE runs SET config = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(config), new Date().toISOString(), runId);
  }

  // --- writing a step --------------------------------------------------------------------------

  /** Commits a step's metrics, trajectories, evaluations and checkpoint together, or nothing. */
  recordStep(runId: number, record: StepRecord): void {
    this.db.transaction(() => {
      const time = new Date().toISOString();
      this.db.prepare('INSERT INTO metrics (run_id, step, time, "values") VALUES (?, ?, ?, ?)').run(runId, record.step, time, JSON.stringify(record.metrics));
      if (record.trajectories && record.trajectories.length > 0) this.insertTrajectories(runId, record.step, record.trajectories);
      for (const evaluation of record.evaluations ?? []) this.addEvaluation(runId, { ...evaluation, step: record.step });
      if (record.checkpoint) this.addCheckpoint(runId, { ...record.checkpoint, step: record.step });
      this.db.prepare('UPDATE runs SET updated_at = ? WHERE id = ?').run(time, runId);
    }).immediate();
  }

  addEvaluation(runId: number, evaluation: Omit<EvaluationRecord, 'time'>): void {
    this.db
      .prepare('INSERT INTO evaluations (run_id, step, split, episodes, success, time) VALUES (?, ?, ?, ?, ?, ?)')
      .run(runId, evaluation.step, evaluation.split, evaluation.episodes, evaluation.success, new Date().toISOString());
  }

  /**
   * Adds a checkpoint row. Resumable state is kept on the `start` row (the KL reference) and on the
   * newest row of every other kind; older rows of that kind drop their state (the history stays).
   */
  addCheckpoint(runId: number, checkpoint: { step: number; kind: string; path?: string; state?: Uint8Array }): number {
    return this.db.transaction(() => {
      if (checkpoint.state !== undefined && checkpoint.kind !== 'start') {
        this.db.prepare('UPDATE checkpoints SET state = NULL WHERE run_id = ? AND kind = ? AND state IS NOT NULL').run(runId, checkpoint.kind);
      }
      const info = this.db
        .prepare('INSERT INTO checkpoints (run_id, step, kind, path, time, state) VALUES (?, ?, ?, ?, ?, ?)')
        .run(runId, checkpoint.step, checkpoint.kind, checkpoint.path ?? null, new Date().toISOString(), checkpoint.state ?? null);
      return Number(info.lastInsertRowid);
    })();
  }

  /**
   * Deletes everything recorded after `step` (for resuming from a checkpoint at `step`: the steps
   * after it will be recorded again).
   */
  truncateAfter(runId: number, step: number): void {
    this.db.transaction(() => {
      for (const table of ['metrics', 'trajectories', 'evaluations', 'checkpoints']) {
        this.db.prepare(`DELETE FROM ${table} WHERE run_id = ? AND step > ?`).run(runId, step);
      }
    }).immediate();
  }

  private insertTrajectories(runId: number, step: number, trajectories: readonly Omit<TrajectoryRecord, 'step'>[]): void {
    const insert = this.db.prepare(
      `INSERT INTO trajectories (run_id, step, idx, group_id, seed, total_reward, success, truncated, messages, tokens, pieces,
         loss_mask, logprobs, rewards, advantages, turns)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const t of trajectories) {
      insert.run(
        runId, step, t.index, t.groupId, t.seed, t.totalReward, t.success ? 1 : 0, t.truncated ? 1 : 0,
        JSON.stringify(t.messages), JSON.stringify(t.tokens), JSON.stringify(t.pieces), JSON.stringify(t.lossMask),
        JSON.stringify(t.logprobs), JSON.stringify(t.rewards), t.advantages === null ? null : JSON.stringify(t.advantages), JSON.stringify(t.turns),
      );
    }
  }

  // --- reading ---------------------------------------------------------------------------------

  /** Runs `body` in one transaction: its reads see one committed snapshot, its writes commit together. */
  transaction<T>(body: () => T): T {
    return this.db.transaction(body)();
  }

  metrics(runId: number): MetricsRecord[] {
    return (this.db.prepare('SELECT step, time, "values" FROM metrics WHERE run_id = ? ORDER BY step').all(runId) as Row[]).map((r) => ({
      step: r.step,
      time: r.time,
      values: JSON.parse(r.values),
    }));
  }

  evaluations(runId: number): EvaluationRecord[] {
    return (this.db.prepare('SELECT step, split, episodes, success, time FROM evaluations WHERE run_id = ? ORDER BY step, id').all(runId) as Row[]).map(
      (r) => ({ step: r.step, split: r.split, episodes: r.episodes, success: r.success, time: r.time }),
    );
  }

  checkpoints(runId: number): CheckpointRecord[] {
    return (
      this.db.prepare('SELECT id, step, kind, path, time, state IS NOT NULL AS has_state FROM checkpoints WHERE run_id = ? ORDER BY step, id').all(runId) as Row[]
    ).map((r) => ({ id: r.id, step: r.step, kind: r.kind, path: r.path, time: r.time, hasState: r.has_state === 1 }));
  }

  /** The newest checkpoint of a kind that still holds resumable state, if any. */
  latestCheckpoint(runId: number, kind: string): CheckpointRecord | undefined {
    return this.checkpoints(runId)
      .filter((c) => c.kind === kind && c.hasState)
      .at(-1);
  }

  checkpointState(checkpointId: number): Uint8Array {
    const row = this.db.prepare('SELECT state FROM checkpoints WHERE id = ?').get(checkpointId) as Row | undefined;
    if (row?.state == null) throw new AgentRlError('STORE', `${this.path}: checkpoint ${checkpointId} holds no state`, { checkpointId });
    return new Uint8Array(row.state as Buffer);
  }

  /** Trajectory headers (no token arrays) for browsing. */
  trajectoryList(runId: number): { step: number; index: number; groupId: string; totalReward: number; success: boolean; tokens: number }[] {
    return (
      this.db
        .prepare('SELECT step, idx, group_id, total_reward, success, json_array_length(tokens) AS n FROM trajectories WHERE run_id = ? ORDER BY step, idx')
        .all(runId) as Row[]
    ).map((r) => ({ step: r.step, index: r.idx, groupId: r.group_id, totalReward: r.total_reward, success: r.success === 1, tokens: r.n }));
  }

  trajectory(runId: number, step: number, index: number): TrajectoryRecord | undefined {
    const row = this.db.prepare('SELECT * FROM trajectories WHERE run_id = ? AND step = ? AND idx = ?').get(runId, step, index) as Row | undefined;
    return row === undefined ? undefined : trajectoryFromRow(row);
  }

  /** Every trajectory of a run in step order, streamed (for export). */
  *iterateTrajectories(runId: number): IterableIterator<TrajectoryRecord> {
    for (const row of this.db.prepare('SELECT * FROM trajectories WHERE run_id = ? ORDER BY step, idx').iterate(runId)) {
      yield trajectoryFromRow(row as Row);
    }
  }

  countTrajectories(runId: number): number {
    return (this.db.prepare('SELECT count(*) AS n FROM trajectories WHERE run_id = ?').get(runId) as Row).n;
  }

  /** SQLite's own consistency check ("ok" when the file is sound). */
  integrityCheck(): string {
    return this.db.pragma('integrity_check', { simple: true }) as string;
  }
}

function runFromRow(row: Row): RunRecord {
  return {
    id: row.id,
    name: row.name,
    command: row.command,
    status: row.status,
    seed: row.seed,
    gitCommit: row.git_commit,
    config: JSON.parse(row.config),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function trajectoryFromRow(row: Row): TrajectoryRecord {
  return {
    step: row.step,
    index: row.idx,
    groupId: row.group_id,
    seed: row.seed,
    totalReward: row.total_reward,
    success: row.success === 1,
    truncated: row.truncated === 1,
    messages: JSON.parse(row.messages),
    tokens: JSON.parse(row.tokens),
    pieces: JSON.parse(row.pieces),
    lossMask: JSON.parse(row.loss_mask),
    logprobs: JSON.parse(row.logprobs),
    rewards: JSON.parse(row.rewards),
    advantages: row.advantages === null ? null : JSON.parse(row.advantages),
    turns: JSON.parse(row.turns),
  };
}
