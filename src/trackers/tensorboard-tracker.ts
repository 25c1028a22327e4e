/**
 * Writes TensorBoard event files (tfrecord.ts): `<dir>/<run name>/events.out.tfevents.<time>.<host>.<pid>.agentrl`,
 * one file per process (a resumed run adds a file beside the first; TensorBoard reads the folder
 * as one run). Each `log` appends one event with the step's scalars, so `tensorboard --logdir <dir>`
 * shows a live run. Metric keys are the tags.
 */
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileVersionEvent, scalarsEvent, tfRecord } from './tfrecord.ts';
import { finiteMetrics, TrackerError, type TrackedRun, type TrackedRunEnd, type Tracker } from './tracker.ts';

export interface TensorBoardTrackerOptions {
  /** The log folder (`tensorboard --logdir` it); the run writes into its own subfolder. */
  dir: string;
  run: TrackedRun;
}

export class TensorBoardTracker implements Tracker {
  private constructor(readonly file: string) {}

  static async open({ dir, run }: TensorBoardTrackerOptions): Promise<TensorBoardTracker> {
    const folder = join(dir, run.name.replace(/[\\/]/g, '_'));
    const now = Date.now() / 1000;
    const file = join(folder, `events.out.tfevents.${Math.floor(now)}.${hostname()}.${process.pid}.agentrl`);
    try {
      await mkdir(folder, { recursive: true });
      await writeFile(file, tfRecord(fileVersionEvent(now)), { flag: 'wx' });
    } catch (error) {
      throw new TrackerError('TensorBoard', `cannot write event file ${file}: ${(error as Error).message}`, { file });
    }
    return new TensorBoardTracker(file);
  }

  async log(step: number, metrics: Readonly<Record<string, number>>, time = new Date()): Promise<void> {
    const scalars = finiteMetrics(metrics);
    if (scalars.length === 0) return;
    try {
      await appendFile(this.file, tfRecord(scalarsEvent(time.getTime() / 1000, step, scalars)));
    } catch (error) {
      throw new TrackerError('TensorBoard', `cannot append to ${this.file}: ${(error as Error).message}`, {
        file: this.file,
      });
    }
  }

  async finish(_end: TrackedRunEnd): Promise<void> {
    // Every event is appended as it is logged: nothing is pending.
  }
}
