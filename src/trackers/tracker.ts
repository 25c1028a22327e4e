/**
 * A metrics tracker: somewhere else the iteration metrics go, beside the run store — the tools
 * practitioners already run (MLflow's tracking server, TensorBoard's event files). The run store
 * stays the record that `--resume` and the dashboard read; a tracker is a copy.
 */
import { AgentRlError } from '../core/errors.ts';

export interface TrackedRun {
  /** The run's name in the store (`frozen-lake-grpo-3`); a resumed run logs into the same tracker run. */
  name: string;
  /** Logged once as parameters (MLflow) or as a text summary (TensorBoard). */
  config: Record<string, unknown>;
}

export type TrackedRunEnd = 'completed' | 'interrupted' | 'failed';

export interface Tracker {
  /** The step's metrics; non-finite values are left out (neither MLflow's JSON nor TensorBoard's readers take NaN the same way). */
  log(step: number, metrics: Readonly<Record<string, number>>, time?: Date): Promise<void>;
  /** Marks the run ended and flushes what is pending. */
  finish(end: TrackedRunEnd): Promise<void>;
}

/** A tracker refused a request or could not be reached; the message names the tracker and what it answered. */
export class TrackerError extends AgentRlError {
  constructor(tracker: string, message: string, details: Record<string, unknown> = {}) {
    super('TRACKER_ERROR', `${tracker}: ${message}`, { tracker, ...details });
  }
}

/** The finite metrics, in key order. */
export function finiteMetrics(metrics: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(metrics).filter(([, value]) => typeof value === 'number' && Number.isFinite(value));
}
