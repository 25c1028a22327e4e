/**
 * Choosing a tracker: the `--tracker` flags (also config-file keys) and `openTracker`, which the
 * CLI and library users call alike. `trackIterations` adapts a tracker to `runRl`'s `onIteration`.
 *
 *   agentrl train --tracker mlflow --tracker-uri http://127.0.0.1:5000 [--tracker-experiment agentrl]
 *   agentrl train --tracker tensorboard --tracker-dir runs/tensorboard
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../core/errors.ts';
import { MlflowTracker } from './mlflow-tracker.ts';
import { TensorBoardTracker } from './tensorboard-tracker.ts';
import type { TrackedRun, Tracker } from './tracker.ts';

export const trackerNames = ['none', 'mlflow', 'tensorboard'] as const;

export const trackerOptionsShape = {
  tracker: z
    .enum(trackerNames)
    .default('none')
    .describe('also log metrics to: mlflow (a tracking server), tensorboard (event files), none'),
  trackerUri: z
    .string()
    .optional()
    .describe('MLflow tracking server for --tracker mlflow (default $MLFLOW_TRACKING_URI), e.g. http://127.0.0.1:5000'),
  trackerExperiment: z.string().default('agentrl').describe('MLflow experiment the run is logged under'),
  trackerDir: z
    .string()
    .default('runs/tensorboard')
    .describe('TensorBoard log folder for --tracker tensorboard (each run in its own subfolder)'),
} as const;

export interface TrackerOptions {
  tracker?: (typeof trackerNames)[number];
  trackerUri?: string;
  trackerExperiment?: string;
  trackerDir?: string;
}

/** The chosen tracker for `run`, or undefined for `none`. */
export async function openTracker(options: TrackerOptions, run: TrackedRun): Promise<Tracker | undefined> {
  const { tracker = 'none' } = options;
  if (tracker === 'none') return undefined;
  if (tracker === 'tensorboard') return TensorBoardTracker.open({ dir: options.trackerDir ?? 'runs/tensorboard', run });
  const uri = options.trackerUri ?? process.env.MLFLOW_TRACKING_URI;
  if (uri === undefined || uri === '') {
    throw new InvalidArgumentError(
      '--tracker mlflow needs the tracking server: pass --tracker-uri http://<host>:<port> or set MLFLOW_TRACKING_URI',
      { tracker },
    );
  }
  return MlflowTracker.open({ uri, experiment: options.trackerExperiment, run });
}

/** `runRl({ onIteration: trackIterations(tracker) })`: each iteration's metrics (less its number) to the tracker. */
export function trackIterations(
  tracker: Tracker,
): (metrics: { iteration: number } & Record<string, number | undefined>) => Promise<void> {
  return ({ iteration, ...values }) => tracker.log(iteration, values as Record<string, number>);
}
