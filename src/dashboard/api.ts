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
 *
 * Query strings and numeric path segments are checked first (api-query.ts): a bad one is an
 * InvalidArgumentError, answered 400.
 */
import { AgentRlError } from '../core/errors.ts';
import type { RunStore } from '../store/run-store.ts';
import { metricsQuerySchema, noQuerySchema, parseQuery, pathNumber, trajectoriesQuerySchema } from './api-query.ts';
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
    const path = ['/api/runs', ...parts].join('/');
    if (runId === undefined) {
      parseQuery(noQuerySchema, query, path);
      return store.runs().map((run) => ({ ...run, ...summary(store, run.id) }));
    }
    const run = store.run(runId);
    if (section === undefined) {
      parseQuery(noQuerySchema, query, path);
      return { run, evaluations: store.evaluations(run.id), checkpoints: store.checkpoints(run.id) };
    }
    if (section === 'metrics' && parts.length === 2)
      return metricColumns(store.metrics(run.id), {
        createdAt: run.createdAt,
        ...parseQuery(metricsQuerySchema, query, path),
      });
    if (section === 'trajectories' && parts.length === 2)
      return store.trajectoryPage(run.id, parseQuery(trajectoriesQuerySchema, query, path));
    if (section === 'trajectories' && parts.length === 4) {
      parseQuery(noQuerySchema, query, path);
      const trajectory = store.trajectory(run.id, pathNumber(first, 'step'), pathNumber(second, 'trajectory index'));
      if (trajectory === undefined) throw new ApiNotFoundError(`run ${run.name} has no trajectory ${first}/${second}`);
      return trajectory;
    }
    if (section === 'groups' && second !== undefined && parts.length === 4) {
      parseQuery(noQuerySchema, query, path);
      const group = store.groupTrajectories(run.id, pathNumber(first, 'step'), second);
      if (group.length === 0) throw new ApiNotFoundError(`run ${run.name} has no group "${second}" at step ${first}`);
      return group;
    }
    throw new ApiNotFoundError(`no such API path: ${path} (see src/dashboard/api.ts for the paths)`);
  });
}

function summary(store: RunStore, runId: number): { steps: number; last: Record<string, number> | null } {
  const { steps, last } = store.metricsSummary(runId);
  return { steps, last: last?.values ?? null };
}
