/**
 * The dashboard's read-only JSON API over the run store. Every answer is read in one transaction
 * (one committed snapshot, also while `agentrl train` writes the store).
 *
 *   GET /api/runs                                   runs, newest first, with their step count and last metrics
 *   GET /api/runs/:run                              run record, evaluations, checkpoints
 *   GET /api/runs/:run/metrics?after=N&maxPoints=M  metric columns (metric-series.ts): steps after N, downsampled to M points
 *   GET /api/runs/:run/trajectories?step=&group=&minReward=&maxReward=&success=&offset=&limit=
 *                                                   { total, offset, items: [{ step, index, groupId, totalReward, success, tokens }] }
 *   GET /api/runs/:run/trajectories/:step/:index    one trajectory, token level
 *   GET /api/runs/:run/groups/:step/:group          the episodes of one task group at a step, token level
 */
import { AgentRlError, InvalidArgumentError } from '../core/errors.ts';
import type { RunStore } from '../store/run-store.ts';
import { metricColumns } from './metric-series.ts';

/** An API path or record that does not exist (answered 404). */
export class ApiNotFoundError extends AgentRlError {
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}

export function answerApi(store: RunStore, parts: readonly string[], query: URLSearchParams): unknown {
  return store.transaction(() => {
    const [runId, section, first, second] = parts;
    if (runId === undefined) return store.runs().map((run) => ({ ...run, ...summary(store, run.id) }));
    const run = store.run(runId);
    if (section === undefined)
      return { run, evaluations: store.evaluations(run.id), checkpoints: store.checkpoints(run.id) };
    if (section === 'metrics' && parts.length === 2) {
      return metricColumns(store.metrics(run.id), {
        createdAt: run.createdAt,
        after: integer(query, 'after'),
        maxPoints: integer(query, 'maxPoints'),
      });
    }
    if (section === 'trajectories' && parts.length === 2) {
      return store.trajectoryPage(run.id, {
        step: integer(query, 'step'),
        groupId: query.get('group') || undefined,
        minReward: number(query, 'minReward'),
        maxReward: number(query, 'maxReward'),
        success: boolean(query, 'success'),
        offset: integer(query, 'offset'),
        limit: integer(query, 'limit'),
      });
    }
    if (section === 'trajectories' && parts.length === 4) {
      const trajectory = store.trajectory(run.id, Number(first), Number(second));
      if (trajectory === undefined) throw new ApiNotFoundError(`run ${run.name} has no trajectory ${first}/${second}`);
      return trajectory;
    }
    if (section === 'groups' && parts.length === 4) {
      const group = store.groupTrajectories(run.id, Number(first), second!);
      if (group.length === 0) throw new ApiNotFoundError(`run ${run.name} has no group "${second}" at step ${first}`);
      return group;
    }
    throw new ApiNotFoundError(
      `no such API path: /api/runs/${parts.join('/')} (see src/dashboard/api.ts for the paths)`,
    );
  });
}

function summary(store: RunStore, runId: number): { steps: number; last: Record<string, number> | null } {
  const { steps, last } = store.metricsSummary(runId);
  return { steps, last: last?.values ?? null };
}

function number(query: URLSearchParams, key: string): number | undefined {
  const text = query.get(key);
  if (text === null || text === '') return undefined;
  const value = Number(text);
  if (!Number.isFinite(value))
    throw new InvalidArgumentError(`query parameter ${key}=${JSON.stringify(text)} is not a number`, { key, text });
  return value;
}

function integer(query: URLSearchParams, key: string): number | undefined {
  const value = number(query, key);
  if (value !== undefined && !Number.isInteger(value))
    throw new InvalidArgumentError(`query parameter ${key}=${value} is not an integer`, { key, value });
  return value;
}

function boolean(query: URLSearchParams, key: string): boolean | undefined {
  const text = query.get(key);
  if (text === null || text === '') return undefined;
  if (text === 'true' || text === 'false') return text === 'true';
  throw new InvalidArgumentError(`query parameter ${key}=${JSON.stringify(text)} is not true or false`, { key, text });
}
