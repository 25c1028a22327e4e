/**
 * A run's metrics as columns for the charts: one array per metric, aligned with the steps, the
 * wall time (seconds since the run was created) and the cumulative tokens, so the page can plot
 * any metric against step, time or tokens without reshaping.
 *
 * Long runs are downsampled here, not in the browser: past `maxPoints` rows, consecutive steps are
 * averaged in equal buckets (each bucket's x is its last step, time and token count; a metric with
 * no finite value in the bucket is null). `after` returns only steps after it (live updates fetch
 * just the new points); the cumulative token count still counts every step from the first.
 */
import { at } from '../core/indexing.ts';
import type { MetricsRecord } from '../store/types.ts';

export interface MetricColumns {
  steps: number[];
  /** Seconds since the run was created. */
  seconds: number[];
  /** Cumulative tokens sampled (the `sampledTokens` metric, else `trainedTokens`); null when neither is recorded. */
  tokens: (number | null)[];
  /** One array per metric key, aligned with `steps`; null where the step has no finite value. */
  values: Record<string, (number | null)[]>;
  /** The last step recorded (also when `after` filtered everything out); 0 for none. */
  lastStep: number;
  /** Steps averaged into one point (1 = every step is a point). */
  bucketSize: number;
}

export interface MetricColumnsOptions {
  /** The run's creation time (ISO), the origin of `seconds`. */
  createdAt: string;
  /** Only steps after this one (default: all). */
  after?: number;
  /** Most points returned; more rows are averaged in buckets (default 2,000). */
  maxPoints?: number;
}

const tokenKeys = ['sampledTokens', 'trainedTokens'] as const;

export function metricColumns(
  records: readonly MetricsRecord[],
  { createdAt, after = 0, maxPoints = 2000 }: MetricColumnsOptions,
): MetricColumns {
  const origin = Date.parse(createdAt);
  const tokenKey = tokenKeys.find((key) => records.some((r) => Number.isFinite(r.values[key])));
  let tokens = 0;
  const rows: { step: number; seconds: number; tokens: number | null; values: Record<string, number> }[] = [];
  for (const record of records) {
    if (tokenKey !== undefined) tokens += finite(record.values[tokenKey]) ?? 0;
    if (record.step <= after) continue;
    rows.push({
      step: record.step,
      seconds: (Date.parse(record.time) - origin) / 1000,
      tokens: tokenKey === undefined ? null : tokens,
      values: record.values,
    });
  }
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r.values)))].sort();
  const bucketSize = Math.max(1, Math.ceil(rows.length / Math.max(1, maxPoints)));
  const columns: MetricColumns = {
    steps: [],
    seconds: [],
    tokens: [],
    values: Object.fromEntries(keys.map((k) => [k, []])),
    lastStep: records.at(-1)?.step ?? 0,
    bucketSize,
  };
  for (let start = 0; start < rows.length; start += bucketSize) {
    const bucket = rows.slice(start, start + bucketSize);
    const last = at(bucket, bucket.length - 1, 'bucket');
    columns.steps.push(last.step);
    columns.seconds.push(last.seconds);
    columns.tokens.push(last.tokens);
    for (const [key, column] of Object.entries(columns.values))
      column.push(mean(bucket.map((r) => finite(r.values[key]))));
  }
  return columns;
}

function finite(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function mean(values: readonly (number | undefined)[]): number | null {
  let sum = 0;
  let count = 0;
  for (const value of values) {
    if (value === undefined) continue;
    sum += value;
    count++;
  }
  return count === 0 ? null : sum / count;
}
