/**
 * Learning-rate schedule: linear warm-up to the peak, then cosine decay to `minRatio`·peak
 * (Loshchilov & Hutter 2017, without restarts). `step` counts from 1.
 */
export interface ScheduleOptions {
  peak: number;
  totalSteps: number;
  warmupSteps?: number;
  /** Final learning rate as a fraction of the peak. */
  minRatio?: number;
}

export function learningRateAt(
  step: number,
  { peak, totalSteps, warmupSteps = 0, minRatio = 0.1 }: ScheduleOptions,
): number {
  if (warmupSteps > 0 && step <= warmupSteps) return (peak * step) / warmupSteps;
  const span = Math.max(1, totalSteps - warmupSteps);
  const progress = Math.min(1, Math.max(0, (step - warmupSteps) / span));
  return peak * (minRatio + (1 - minRatio) * 0.5 * (1 + Math.cos(Math.PI * progress)));
}
