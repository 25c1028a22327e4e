/** Rows of the store's tables and records: the runs and trajectories tables' columns to their fields, and trajectories back to rows. */
import type Database from 'better-sqlite3';
import type { RunRecord, TrajectoryRecord } from './types.ts';

/** A row as better-sqlite3 returns it: column name → value (the schema, not TypeScript, types the columns). */
// biome-ignore lint/suspicious/noExplicitAny: a row's columns are typed by the SQL schema (schema.ts), read field by field
export type Row = Record<string, any>;

export function runFromRow(row: Row): RunRecord {
  return {
    id: row.id,
    name: row.name,
    command: row.command,
    // A version-1 file opened read-only still says `stopped` (now `interrupted`) and has no version-2 columns.
    status: row.status === 'stopped' ? 'interrupted' : row.status,
    statusReason: row.status_reason ?? null,
    seed: row.seed,
    gitCommit: row.git_commit,
    config: JSON.parse(row.config),
    checkpointDir: row.checkpoint_dir ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function trajectoryFromRow(row: Row): TrajectoryRecord {
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
    // Absent columns (a version-2 file opened read-only) and NULL read the same: no components.
    ...(row.reward_components == null ? {} : { rewardComponents: JSON.parse(row.reward_components) }),
    ...(row.reward_failures == null ? {} : { rewardFailures: JSON.parse(row.reward_failures) }),
  };
}

/** Writes a step's trajectories as rows of the trajectories table (call inside the step's transaction). */
export function insertTrajectories(
  db: Database.Database,
  runId: number,
  step: number,
  trajectories: readonly Omit<TrajectoryRecord, 'step'>[],
): void {
  const insert = db.prepare(
    `INSERT INTO trajectories (run_id, step, idx, group_id, seed, total_reward, success, truncated, messages, tokens, pieces,
       loss_mask, logprobs, rewards, advantages, turns, reward_components, reward_failures)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const t of trajectories) {
    insert.run(
      runId,
      step,
      t.index,
      t.groupId,
      t.seed,
      t.totalReward,
      t.success ? 1 : 0,
      t.truncated ? 1 : 0,
      JSON.stringify(t.messages),
      JSON.stringify(t.tokens),
      JSON.stringify(t.pieces),
      JSON.stringify(t.lossMask),
      JSON.stringify(t.logprobs),
      JSON.stringify(t.rewards),
      t.advantages === null ? null : JSON.stringify(t.advantages),
      JSON.stringify(t.turns),
      t.rewardComponents === undefined ? null : JSON.stringify(t.rewardComponents),
      t.rewardFailures === undefined ? null : JSON.stringify(t.rewardFailures),
    );
  }
}
