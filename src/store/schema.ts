/**
 * The run store's tables (SQLite). One row per run; metrics, trajectories, evaluations and
 * checkpoints hang off it by `run_id` and are keyed by the training step (RL iteration).
 *
 * Token-level arrays are JSON text (readable with the sqlite3 shell and by the dashboard as is);
 * a checkpoint's resumable state (weights, optimizer moments, RNG) is one safetensors BLOB.
 */
export const schemaVersion = 3;

/**
 * The runs table. Version 2 added `interrupted` (which replaced `stopped`), the failure reason, the
 * run's own checkpoint folder (unique: two runs never share one) and the lock of the process
 * training the run.
 */
function runsTableSql(name: string): string {
  return `
CREATE TABLE IF NOT EXISTS ${name} (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  name            TEXT NOT NULL UNIQUE,
  command         TEXT NOT NULL,
  status          TEXT NOT NULL CHECK (status IN ('running', 'completed', 'interrupted', 'failed')),
  status_reason   TEXT,
  seed            INTEGER NOT NULL,
  git_commit      TEXT,
  config          TEXT NOT NULL,
  checkpoint_dir  TEXT UNIQUE,
  lock_pid        INTEGER,
  lock_host       TEXT,
  lock_since      TEXT,
  created_at      TEXT NOT NULL,
  updated_at      TEXT NOT NULL
);`;
}

/** Rebuilds a version-1 runs table as version 2 (SQLite cannot alter a CHECK); run with foreign keys off. */
export const migrateVersion1Sql = `
${runsTableSql('runs_v2')}
INSERT INTO runs_v2 (id, name, command, status, seed, git_commit, config, created_at, updated_at)
  SELECT id, name, command, CASE status WHEN 'stopped' THEN 'interrupted' ELSE status END, seed, git_commit, config, created_at, updated_at FROM runs;
DROP TABLE runs;
ALTER TABLE runs_v2 RENAME TO runs;
`;

/** The columns the runs table must have for this version to use the file. */
export const requiredRunColumns: readonly string[] = [
  'id',
  'name',
  'command',
  'status',
  'status_reason',
  'seed',
  'git_commit',
  'config',
  'checkpoint_dir',
  'lock_pid',
  'lock_host',
  'lock_since',
  'created_at',
  'updated_at',
];

/**
 * Version 3 added each trajectory's named reward components and failures (JSON objects, NULL for
 * episodes without components): columns added in place to a version-2 file, whose rows keep NULL.
 */
export const version3TrajectoryColumns: readonly [name: string, sql: string][] = [
  ['reward_components', 'reward_components TEXT'],
  ['reward_failures', 'reward_failures TEXT'],
];

/** The columns each table must have for this version to use the file (version-3 columns are added when missing). */
export const requiredColumns: Readonly<Record<string, readonly string[]>> = {
  runs: requiredRunColumns,
  metrics: ['run_id', 'step', 'time', 'values'],
  trajectories: [
    'run_id',
    'step',
    'idx',
    'group_id',
    'seed',
    'total_reward',
    'success',
    'truncated',
    'messages',
    'tokens',
    'pieces',
    'loss_mask',
    'logprobs',
    'rewards',
    'advantages',
    'turns',
  ],
  evaluations: ['run_id', 'step', 'split', 'episodes', 'success', 'time'],
  checkpoints: ['id', 'run_id', 'step', 'kind', 'path', 'time', 'state'],
};

export const schemaSql = `
${runsTableSql('runs')}
CREATE TABLE IF NOT EXISTS metrics (
  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step    INTEGER NOT NULL,
  time    TEXT NOT NULL,
  "values" TEXT NOT NULL,
  PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS trajectories (
  id            INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id        INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step          INTEGER NOT NULL,
  idx           INTEGER NOT NULL,
  group_id      TEXT NOT NULL,
  seed          INTEGER NOT NULL,
  total_reward  REAL NOT NULL,
  success       INTEGER NOT NULL,
  truncated     INTEGER NOT NULL,
  messages      TEXT NOT NULL,
  tokens        TEXT NOT NULL,
  pieces        TEXT NOT NULL,
  loss_mask     TEXT NOT NULL,
  logprobs      TEXT NOT NULL,
  rewards       TEXT NOT NULL,
  advantages    TEXT,
  turns         TEXT NOT NULL,
  reward_components TEXT,
  reward_failures   TEXT,
  UNIQUE (run_id, step, idx)
);
CREATE TABLE IF NOT EXISTS evaluations (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id    INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step      INTEGER NOT NULL,
  split     TEXT NOT NULL,
  episodes  INTEGER NOT NULL,
  success   REAL NOT NULL,
  time      TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS checkpoints (
  id      INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step    INTEGER NOT NULL,
  kind    TEXT NOT NULL,
  path    TEXT,
  time    TEXT NOT NULL,
  state   BLOB
);
CREATE INDEX IF NOT EXISTS checkpoints_by_run ON checkpoints (run_id, step);
CREATE INDEX IF NOT EXISTS evaluations_by_run ON evaluations (run_id, step);
`;
