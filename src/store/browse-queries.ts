/**
 * Read queries for browsing a run (the dashboard): the trajectory list paged and filtered in SQL
 * (a run can hold tens of thousands of episodes), a task group's episodes, a run's metric summary.
 */
import type Database from 'better-sqlite3';
import type { Row } from './rows.ts';
import type { MetricsRecord } from './types.ts';

/** A trajectory's header: everything but the token arrays. */
export interface TrajectoryHeader {
  step: number;
  index: number;
  groupId: string;
  totalReward: number;
  success: boolean;
  tokens: number;
}

/** Which trajectories to list; every field narrows the list, none = all. */
export interface TrajectoryFilter {
  step?: number;
  groupId?: string;
  minReward?: number;
  maxReward?: number;
  success?: boolean;
  /** Rows skipped (default 0). */
  offset?: number;
  /** Rows returned (default 50, at most 500). */
  limit?: number;
}

export interface TrajectoryPage {
  /** Trajectories matching the filter (all pages). */
  total: number;
  offset: number;
  items: TrajectoryHeader[];
}

export function trajectoryPage(db: Database.Database, runId: number, filter: TrajectoryFilter = {}): TrajectoryPage {
  const where = ['run_id = ?'];
  const parameters: (number | string)[] = [runId];
  const conditions: [sql: string, value: number | string | undefined][] = [
    ['step = ?', filter.step],
    ['group_id = ?', filter.groupId],
    ['total_reward >= ?', filter.minReward],
    ['total_reward <= ?', filter.maxReward],
    ['success = ?', filter.success === undefined ? undefined : filter.success ? 1 : 0],
  ];
  for (const [sql, value] of conditions) {
    if (value === undefined) continue;
    where.push(sql);
    parameters.push(value);
  }
  const offset = Math.max(0, Math.floor(filter.offset ?? 0));
  const limit = Math.min(500, Math.max(1, Math.floor(filter.limit ?? 50)));
  const clause = where.join(' AND ');
  const total = (db.prepare(`SELECT count(*) AS n FROM trajectories WHERE ${clause}`).get(...parameters) as Row)
    .n as number;
  const rows = db
    .prepare(
      `SELECT step, idx, group_id, total_reward, success, json_array_length(tokens) AS n FROM trajectories WHERE ${clause} ORDER BY step, idx LIMIT ? OFFSET ?`,
    )
    .all(...parameters, limit, offset) as Row[];
  return { total, offset, items: rows.map(headerFromRow) };
}

/** Every trajectory header of a run, in step and batch order. */
export function trajectoryHeaders(db: Database.Database, runId: number): TrajectoryHeader[] {
  return (
    db
      .prepare(
        'SELECT step, idx, group_id, total_reward, success, json_array_length(tokens) AS n FROM trajectories WHERE run_id = ? ORDER BY step, idx',
      )
      .all(runId) as Row[]
  ).map(headerFromRow);
}

export function headerFromRow(r: Row): TrajectoryHeader {
  return {
    step: r.step,
    index: r.idx,
    groupId: r.group_id,
    totalReward: r.total_reward,
    success: r.success === 1,
    tokens: r.n,
  };
}

/** The number of recorded steps and the last one's metrics. */
export function metricsSummary(db: Database.Database, runId: number): { steps: number; last: MetricsRecord | null } {
  const { n } = db.prepare('SELECT count(*) AS n FROM metrics WHERE run_id = ?').get(runId) as Row;
  const last = db
    .prepare('SELECT step, time, "values" FROM metrics WHERE run_id = ? ORDER BY step DESC LIMIT 1')
    .get(runId) as Row | undefined;
  return {
    steps: n,
    last: last === undefined ? null : { step: last.step, time: last.time, values: JSON.parse(last.values) },
  };
}

/** The ids of a step's episodes in one task group, in batch order (the caller reads each). */
export function groupIndices(db: Database.Database, runId: number, step: number, groupId: string): number[] {
  return (
    db
      .prepare('SELECT idx FROM trajectories WHERE run_id = ? AND step = ? AND group_id = ? ORDER BY idx')
      .all(runId, step, groupId) as Row[]
  ).map((r) => r.idx);
}
