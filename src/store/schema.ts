/**
 * The run store's tables (SQLite). One row per run; metrics, trajectories, evaluations and
 * checkpoints hang off it by `run_id` and are keyed by the training step (RL iteration).
 *
 * Token-level arrays are JSON text (readable with the sqlite3 shell and by the dashboard as is);
 * a checkpoint's resumable state (weights, optimizer moments, RNG) is one safetensors BLOB.
 */
export const schemaVersion = 1;

export const schemaSql = `
CREATE TABLE IF NOT EXISTS runs (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL UNIQUE,
  command     TEXT NOT NULL,
  status      TEXT NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'failed')),
  seed        INTEGER NOT NULL,
  git_commit  TEXT,
  config      TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
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
