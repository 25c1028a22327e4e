// Each selected run's metric columns, kept in the page and grown incrementally: the first load
// asks the server for at most MAX_POINTS points (it averages longer runs in buckets), later
// refreshes ask only for the steps after the last one seen (?after=N) and append them.
import { getJson } from './dom.js';

export const MAX_POINTS = 1500;

export class MetricData {
  constructor() {
    this.runs = new Map(); // run id → columns { steps, seconds, tokens, values, lastStep, bucketSize }
  }

  columns(runId) {
    return this.runs.get(runId);
  }

  /** Every metric key of the given runs, sorted. */
  keys(runIds) {
    return [...new Set(runIds.flatMap((id) => Object.keys(this.runs.get(id)?.values ?? {})))].sort();
  }

  forget(runId) {
    this.runs.delete(runId);
  }

  /** Loads or extends each run's columns; resolves to the ids whose data changed. */
  async refresh(runIds) {
    const changed = [];
    await Promise.all(
      runIds.map(async (id) => {
        const have = this.runs.get(id);
        // Appended steps are single points: once they outnumber the downsampled ones, load afresh.
        const reload = have === undefined || (have.bucketSize > 1 && have.appended > MAX_POINTS);
        const after = reload ? 0 : have.lastStep;
        const fresh = await getJson(`/api/runs/${id}/metrics?maxPoints=${MAX_POINTS}&after=${after}`);
        if (reload) {
          this.runs.set(id, { ...fresh, appended: 0 });
          changed.push(id);
        } else if (fresh.steps.length > 0) {
          append(have, fresh);
          changed.push(id);
        }
      }),
    );
    return changed;
  }
}

function append(have, fresh) {
  const length = have.steps.length;
  have.steps.push(...fresh.steps);
  have.seconds.push(...fresh.seconds);
  have.tokens.push(...fresh.tokens);
  for (const key of new Set([...Object.keys(have.values), ...Object.keys(fresh.values)])) {
    have.values[key] ??= new Array(length).fill(null);
    const column = have.values[key];
    column.push(...(fresh.values[key] ?? new Array(fresh.steps.length).fill(null)));
  }
  have.lastStep = fresh.lastStep;
  have.appended += fresh.steps.length;
}
