/**
 * The run store: one SQLite file (default `runs/agentrl.db`) holding every run's effective config,
 * per-step metrics, sampled trajectories, evaluations and checkpoints.
 *
 * - WAL journal: readers (the dashboard, `agentrl export`) never block the training process and
 *   always see whole transactions.
 * - Each run has its own checkpoint folder (`checkpoint_dir`, unique) and, while a process trains
 *   it, a lock naming that process (`lockRun`): a second process refuses the run; a lock left by a
 *   dead process is taken over.
 * - Everything a training step produces is committed in one transaction (`recordStep`), so a
 *   process killed at any moment (even SIGKILL) leaves every committed step whole and nothing of
 *   the step it was in. `synchronous = NORMAL` makes commits survive a process crash; only a power
 *   loss can drop the last commits (SQLite's documented WAL trade-off).
 */
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { AgentRlError } from '../core/errors.ts';
import {
  groupIndices,
  metricsSummary,
  trajectoryHeaders,
  trajectoryPage,
  type TrajectoryFilter,
  type TrajectoryHeader,
  type TrajectoryPage,
} from './browse-queries.ts';
import { StoreError, translateSqliteError } from './errors.ts';
import { openDatabase } from './open-database.ts';
import { releaseRunLock, type RunLockHolder, runLockHolder, takeRunLock } from './run-lock.ts';
import { insertTrajectories, type Row, runFromRow, trajectoryFromRow } from './rows.ts';
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
  /** SQLite `max_page_count`: writes past it fail as on a full disk (tests). */
  maxPageCount?: number;
}

export type { RunLockHolder } from './run-lock.ts';

export class RunStore {
  readonly path: string;
  private readonly db: Database.Database;

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.db = db;
  }

  static open(path: string = defaultStorePath, { readonly = false, maxPageCount }: OpenStoreOptions = {}): RunStore {
    return new RunStore(path, openDatabase(path, { readonly, maxPageCount }));
  }

  close(): void {
    this.db.close();
  }

  /** Runs a write; SQLite's errors (disk full, read-only) become a StoreError naming the file and the fix. */
  private write<T>(doing: string, body: () => T): T {
    try {
      return body();
    } catch (error) {
      throw translateSqliteError(this.path, error, doing);
    }
  }

  // --- runs ------------------------------------------------------------------------------------

  /**
   * A new run, `running` and locked by this process. With `checkpointDir`, the run's checkpoint
   * folder (from its final name) is claimed in the same transaction: a folder another run of the
   * store has is refused, so two runs never write into one folder.
   */
  createRun(run: NewRun): RunRecord {
    const now = new Date().toISOString();
    if (run.name !== undefined && this.db.prepare('SELECT 1 FROM runs WHERE name = ?').get(run.name) !== undefined) {
      throw new StoreError(
        this.path,
        'name-taken',
        `a run named "${run.name}" exists; pick another name or --resume it`,
        { name: run.name },
      );
    }
    const create = this.db.transaction(() => {
      const info = this.db
        .prepare(
          `INSERT INTO runs (name, command, status, seed, git_commit, config, lock_pid, lock_host, lock_since, created_at, updated_at)
           VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          run.name ?? `pending-${now}-${process.pid}`,
          run.command,
          run.seed,
          run.gitCommit,
          JSON.stringify(run.config),
          process.pid,
          hostname(),
          now,
          now,
          now,
        );
      const id = Number(info.lastInsertRowid);
      const name = run.name ?? `${run.namePrefix ?? run.command}-${id}`;
      if (run.name === undefined) this.db.prepare('UPDATE runs SET name = ? WHERE id = ?').run(name, id);
      if (run.checkpointDir !== undefined) this.claimCheckpointDir(id, run.checkpointDir(name));
      return id;
    });
    return this.run(String(this.write('creating a run', () => create.immediate())));
  }

  /** The run that has `dir` (resolved) as its checkpoint folder, if any. */
  runWithCheckpointDir(dir: string): RunRecord | undefined {
    const row = this.db.prepare('SELECT * FROM runs WHERE checkpoint_dir = ?').get(resolve(dir)) as Row | undefined;
    return row === undefined ? undefined : runFromRow(row);
  }

  /** Gives a run (one recorded before runs had their own folder) its checkpoint folder; refused when another run has it. */
  setCheckpointDir(runId: number, dir: string): void {
    this.write('recording the checkpoint folder', () =>
      this.db.transaction(() => this.claimCheckpointDir(runId, dir)).immediate(),
    );
  }

  private claimCheckpointDir(runId: number, dir: string): void {
    const owner = this.runWithCheckpointDir(dir);
    if (owner !== undefined && owner.id !== runId) {
      throw new StoreError(
        this.path,
        'checkpoint-folder-taken',
        `${resolve(dir)} is already the checkpoint folder of run ${owner.name}; pick another --out (or leave it out: each run gets checkpoints/<run name>)`,
        { dir, run: owner.name },
      );
    }
    this.db.prepare('UPDATE runs SET checkpoint_dir = ? WHERE id = ?').run(resolve(dir), runId);
  }

  /**
   * Takes the run's lock for this process. A lock held by another live process on this host (or
   * any lock from another host) is refused with a RunLockedError naming the holder; a lock left
   * by a process that no longer runs is taken over and its holder returned.
   */
  lockRun(runId: number): { tookOverFrom?: RunLockHolder } {
    return this.write('locking the run', () =>
      this.db.transaction(() => takeRunLock(this.db, this.path, runId)).immediate(),
    );
  }

  /** Releases the run's lock if this process holds it. */
  unlockRun(runId: number): void {
    this.write('unlocking the run', () => releaseRunLock(this.db, runId));
  }

  /** The process holding the run, if any. */
  lockHolder(runId: number): RunLockHolder | undefined {
    return runLockHolder(this.db, runId);
  }

  /** Runs, newest first. */
  runs(): RunRecord[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY id DESC').all() as Row[]).map(runFromRow);
  }

  /** A run by id (`3`) or name. */
  run(reference: string | number): RunRecord {
    const text = String(reference);
    const row =
      (/^\d+$/.test(text) ? this.db.prepare('SELECT * FROM runs WHERE id = ?').get(Number(text)) : undefined) ??
      this.db.prepare('SELECT * FROM runs WHERE name = ?').get(text);
    if (row === undefined) {
      const known = (this.db.prepare('SELECT id, name FROM runs ORDER BY id').all() as Row[]).map(
        (r) => `${r.id} (${r.name})`,
      );
      throw new RunNotFoundError(this.path, text, known);
    }
    return runFromRow(row as Row);
  }

  /** Sets the status and its reason (why a run failed or was interrupted; cleared otherwise). */
  setStatus(runId: number, status: RunStatus, reason: string | null = null): void {
    this.write('recording the run status', () =>
      this.db
        .prepare('UPDATE runs SET status = ?, status_reason = ?, updated_at = ? WHERE id = ?')
        .run(status, reason, new Date().toISOString(), runId),
    );
  }

  setConfig(runId: number, config: Record<string, unknown>): void {
    this.write('recording the run config', () =>
      this.db
        .prepare('UPDATE runs SET config = ?, updated_at = ? WHERE id = ?')
        .run(JSON.stringify(config), new Date().toISOString(), runId),
    );
  }

  // --- writing a step --------------------------------------------------------------------------

  /** Commits a step's metrics, trajectories, evaluations and checkpoint together, or nothing. */
  recordStep(runId: number, record: StepRecord): void {
    this.write(`recording step ${record.step}`, () =>
      this.db
        .transaction(() => {
          const time = new Date().toISOString();
          this.db
            .prepare('INSERT INTO metrics (run_id, step, time, "values") VALUES (?, ?, ?, ?)')
            .run(runId, record.step, time, JSON.stringify(record.metrics));
          if (record.trajectories && record.trajectories.length > 0)
            insertTrajectories(this.db, runId, record.step, record.trajectories);
          for (const evaluation of record.evaluations ?? [])
            this.addEvaluation(runId, { ...evaluation, step: record.step });
          if (record.checkpoint) this.addCheckpoint(runId, { ...record.checkpoint, step: record.step });
          this.db.prepare('UPDATE runs SET updated_at = ? WHERE id = ?').run(time, runId);
        })
        .immediate(),
    );
  }

  addEvaluation(runId: number, evaluation: Omit<EvaluationRecord, 'time'>): void {
    this.write('recording an evaluation', () =>
      this.db
        .prepare('INSERT INTO evaluations (run_id, step, split, episodes, success, time) VALUES (?, ?, ?, ?, ?, ?)')
        .run(
          runId,
          evaluation.step,
          evaluation.split,
          evaluation.episodes,
          evaluation.success,
          new Date().toISOString(),
        ),
    );
  }

  /**
   * Adds a checkpoint row. Resumable state is kept on the `start` row (the KL reference) and on the
   * newest row of every other kind; older rows of that kind drop their state (the history stays).
   */
  addCheckpoint(runId: number, checkpoint: { step: number; kind: string; path?: string; state?: Uint8Array }): number {
    return this.write('recording a checkpoint', () =>
      this.db.transaction(() => {
        if (checkpoint.state !== undefined && checkpoint.kind !== 'start') {
          this.db
            .prepare('UPDATE checkpoints SET state = NULL WHERE run_id = ? AND kind = ? AND state IS NOT NULL')
            .run(runId, checkpoint.kind);
        }
        const info = this.db
          .prepare('INSERT INTO checkpoints (run_id, step, kind, path, time, state) VALUES (?, ?, ?, ?, ?, ?)')
          .run(
            runId,
            checkpoint.step,
            checkpoint.kind,
            checkpoint.path ?? null,
            new Date().toISOString(),
            checkpoint.state ?? null,
          );
        return Number(info.lastInsertRowid);
      })(),
    );
  }

  /**
   * Deletes everything recorded after `step` (for resuming from a checkpoint at `step`: the steps
   * after it will be recorded again).
   */
  truncateAfter(runId: number, step: number): void {
    this.write('removing the steps after the resume point', () =>
      this.db
        .transaction(() => {
          for (const table of ['metrics', 'trajectories', 'evaluations', 'checkpoints']) {
            this.db.prepare(`DELETE FROM ${table} WHERE run_id = ? AND step > ?`).run(runId, step);
          }
        })
        .immediate(),
    );
  }

  // --- reading ---------------------------------------------------------------------------------

  /** Runs `body` in one transaction: its reads see one committed snapshot, its writes commit together. */
  transaction<T>(body: () => T): T {
    return this.write('writing', () => this.db.transaction(body)());
  }

  metrics(runId: number): MetricsRecord[] {
    return (
      this.db.prepare('SELECT step, time, "values" FROM metrics WHERE run_id = ? ORDER BY step').all(runId) as Row[]
    ).map((r) => ({
      step: r.step,
      time: r.time,
      values: JSON.parse(r.values),
    }));
  }

  evaluations(runId: number): EvaluationRecord[] {
    return (
      this.db
        .prepare('SELECT step, split, episodes, success, time FROM evaluations WHERE run_id = ? ORDER BY step, id')
        .all(runId) as Row[]
    ).map((r) => ({ step: r.step, split: r.split, episodes: r.episodes, success: r.success, time: r.time }));
  }

  checkpoints(runId: number): CheckpointRecord[] {
    return (
      this.db
        .prepare(
          'SELECT id, step, kind, path, time, state IS NOT NULL AS has_state FROM checkpoints WHERE run_id = ? ORDER BY step, id',
        )
        .all(runId) as Row[]
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
    if (row?.state == null)
      throw new StoreError(this.path, 'no-state', `checkpoint ${checkpointId} holds no state`, { checkpointId });
    return new Uint8Array(row.state as Buffer);
  }

  /** Trajectory headers (no token arrays) for browsing. */
  trajectoryList(runId: number): TrajectoryHeader[] {
    return trajectoryHeaders(this.db, runId);
  }

  /** Trajectory headers, filtered (step, group, reward range, success) and paged in SQL. */
  trajectoryPage(runId: number, filter: TrajectoryFilter = {}): TrajectoryPage {
    return trajectoryPage(this.db, runId, filter);
  }

  /** A step's episodes of one task group (the group GRPO normalised together), in batch order. */
  groupTrajectories(runId: number, step: number, groupId: string): TrajectoryRecord[] {
    return groupIndices(this.db, runId, step, groupId).map((index) => this.trajectory(runId, step, index)!);
  }

  /** The number of recorded steps and the last step's metrics (without reading every step). */
  metricsSummary(runId: number): { steps: number; last: MetricsRecord | null } {
    return metricsSummary(this.db, runId);
  }

  trajectory(runId: number, step: number, index: number): TrajectoryRecord | undefined {
    const row = this.db
      .prepare('SELECT * FROM trajectories WHERE run_id = ? AND step = ? AND idx = ?')
      .get(runId, step, index) as Row | undefined;
    return row === undefined ? undefined : trajectoryFromRow(row);
  }

  /** Every trajectory of a run in step order, streamed (for export). */
  *iterateTrajectories(runId: number): IterableIterator<TrajectoryRecord> {
    for (const row of this.db
      .prepare('SELECT * FROM trajectories WHERE run_id = ? ORDER BY step, idx')
      .iterate(runId)) {
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
