export { MlflowTracker, type MlflowTrackerOptions } from './mlflow-tracker.ts';
export { TensorBoardTracker, type TensorBoardTrackerOptions } from './tensorboard-tracker.ts';
export { openTracker, trackIterations, trackerOptionsShape, type TrackerOptions } from './open-tracker.ts';
export { TrackerError, type Tracker, type TrackedRun, type TrackedRunEnd } from './tracker.ts';
