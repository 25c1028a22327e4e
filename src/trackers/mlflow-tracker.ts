/**
 * Logs a run to an MLflow tracking server over its REST API (the server from PyPI:
 * `mlflow server`), no Python involved: experiments/get-by-name (or create), runs/search by the
 * `agentrl.run` tag (a resumed run continues its MLflow run), runs/create, runs/log-batch
 * (the config as params once, then each step's metrics) and runs/update at the end.
 * API: https://mlflow.org/docs/latest/api_reference/rest-api.html
 */
import { finiteMetrics, TrackerError, type TrackedRun, type TrackedRunEnd, type Tracker } from './tracker.ts';

export interface MlflowTrackerOptions {
  /** The tracking server, e.g. http://127.0.0.1:5000. */
  uri: string;
  /** Experiment name (created when missing). Default `agentrl`. */
  experiment?: string;
  run: TrackedRun;
}

/** MLflow's log-batch limits: 1,000 metrics, 100 params per request; a param value is at most 6,000 characters. */
const metricsPerBatch = 1000;
const paramsPerBatch = 100;
const paramValueLimit = 6000;
const endStatus: Record<TrackedRunEnd, string> = { completed: 'FINISHED', interrupted: 'KILLED', failed: 'FAILED' };

export class MlflowTracker implements Tracker {
  private constructor(
    private readonly uri: string,
    /** The MLflow run id. */
    readonly runId: string,
    readonly experimentId: string,
  ) {}

  static async open({ uri, experiment = 'agentrl', run }: MlflowTrackerOptions): Promise<MlflowTracker> {
    const base = uri.replace(/\/+$/, '');
    const experimentId = await experimentIdOf(base, experiment);
    const found = (await call(base, 'runs/search', {
      experiment_ids: [experimentId],
      filter: `tags.\`agentrl.run\` = '${run.name.replace(/'/g, "\\'")}'`,
      max_results: 1,
    })) as { runs?: { info: { run_id: string } }[] };
    const existing = found.runs?.[0]?.info.run_id;
    if (existing !== undefined) {
      await call(base, 'runs/update', { run_id: existing, status: 'RUNNING' });
      return new MlflowTracker(base, existing, experimentId);
    }
    const created = (await call(base, 'runs/create', {
      experiment_id: experimentId,
      run_name: run.name,
      start_time: Date.now(),
      tags: [
        { key: 'agentrl.run', value: run.name },
        { key: 'mlflow.source.name', value: 'agentrl' },
      ],
    })) as { run: { info: { run_id: string } } };
    const tracker = new MlflowTracker(base, created.run.info.run_id, experimentId);
    const params = Object.entries(run.config).map(([key, value]) => ({
      key,
      value: (typeof value === 'string' ? value : JSON.stringify(value)).slice(0, paramValueLimit),
    }));
    for (let i = 0; i < params.length; i += paramsPerBatch)
      await call(base, 'runs/log-batch', { run_id: tracker.runId, params: params.slice(i, i + paramsPerBatch) });
    return tracker;
  }

  async log(step: number, metrics: Readonly<Record<string, number>>, time = new Date()): Promise<void> {
    const entries = finiteMetrics(metrics).map(([key, value]) => ({ key, value, timestamp: time.getTime(), step }));
    for (let i = 0; i < entries.length; i += metricsPerBatch)
      await call(this.uri, 'runs/log-batch', { run_id: this.runId, metrics: entries.slice(i, i + metricsPerBatch) });
  }

  async finish(end: TrackedRunEnd): Promise<void> {
    await call(this.uri, 'runs/update', { run_id: this.runId, status: endStatus[end], end_time: Date.now() });
  }
}

async function experimentIdOf(base: string, name: string): Promise<string> {
  const response = await fetchMlflow(base, `experiments/get-by-name?experiment_name=${encodeURIComponent(name)}`);
  if (response.ok)
    return ((await response.json()) as { experiment: { experiment_id: string } }).experiment.experiment_id;
  const body = await response.text();
  if (!body.includes('RESOURCE_DOES_NOT_EXIST'))
    throw new TrackerError(
      'MLflow',
      `${base} answered ${response.status} to experiments/get-by-name: ${body.slice(0, 300)}`,
    );
  return ((await call(base, 'experiments/create', { name })) as { experiment_id: string }).experiment_id;
}

async function call(base: string, method: string, body: unknown): Promise<unknown> {
  const response = await fetchMlflow(base, method, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok)
    throw new TrackerError('MLflow', `${base} answered ${response.status} to ${method}: ${text.slice(0, 300)}`, {
      status: response.status,
    });
  return text === '' ? {} : JSON.parse(text);
}

async function fetchMlflow(base: string, method: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(`${base}/api/2.0/mlflow/${method}`, { ...init, signal: AbortSignal.timeout(30_000) });
  } catch (error) {
    throw new TrackerError(
      'MLflow',
      `cannot reach the tracking server at ${base} (${(error as Error).message}); start one with \`mlflow server --host 127.0.0.1 --port 5000\` or pass --tracker-uri`,
      { uri: base },
    );
  }
}
