/**
 * check:trackers, agentrl's side: logs a synthetic run (values a function of the step) to MLflow
 * (`--mlflow <uri>`) and to TensorBoard event files (`--tensorboard <dir>`), opening the MLflow
 * run twice as a resumed run does, and writes what it logged to `<out>/expected.json` for the
 * Python readers to compare with.
 *
 *   node --import tsx scripts/interop/trackers/log-runs.ts --mlflow http://127.0.0.1:5000 --tensorboard <dir> --out <dir>
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { MlflowTracker } from '../../../src/trackers/mlflow-tracker.ts';
import { TensorBoardTracker } from '../../../src/trackers/tensorboard-tracker.ts';

const { values } = parseArgs({
  options: { mlflow: { type: 'string' }, tensorboard: { type: 'string' }, out: { type: 'string' } },
});
if (!values.mlflow || !values.tensorboard || !values.out) {
  console.error('usage: log-runs.ts --mlflow <tracking uri> --tensorboard <log dir> --out <dir>');
  process.exit(2);
}
const run = {
  name: 'synthetic-grpo-1',
  config: {
    env: 'bandit',
    algo: 'grpo',
    learningRate: 0.002,
    groupSize: 8,
    systemPrompt: 'answer with <answer>…</answer>',
  },
};
const steps = 40;
const metricsAt = (step: number) => ({
  reward: step / steps,
  kl: 1e-4 * step * step,
  gradNorm: 1 + Math.sin(step),
  loss: step % 7 === 0 ? NaN : -step / 10,
});
const origin = Date.UTC(2025, 0, 1);
const timeAt = (step: number) => new Date(origin + step * 1500);

// MLflow: steps 1–25, then "resumed" (opened again by the run name) for 26–40.
let mlflow = await MlflowTracker.open({ uri: values.mlflow, experiment: 'agentrl-check', run });
const firstRunId = mlflow.runId;
for (let step = 1; step <= steps; step++) {
  if (step === 26) {
    await mlflow.finish('interrupted');
    mlflow = await MlflowTracker.open({ uri: values.mlflow, experiment: 'agentrl-check', run });
  }
  await mlflow.log(step, metricsAt(step), timeAt(step));
}
await mlflow.finish('completed');

const tensorboard = await TensorBoardTracker.open({ dir: values.tensorboard, run });
for (let step = 1; step <= steps; step++) await tensorboard.log(step, metricsAt(step), timeAt(step));
await tensorboard.finish('completed');

const expected = {
  run: run.name,
  experiment: 'agentrl-check',
  runIds: [firstRunId, mlflow.runId],
  params: Object.fromEntries(
    Object.entries(run.config).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  ),
  tensorboardFolder: join(values.tensorboard, run.name),
  // Non-finite values are not logged.
  metrics: Object.fromEntries(
    Object.keys(metricsAt(1)).map((key) => [
      key,
      Array.from({ length: steps }, (_, i) => [
        i + 1,
        metricsAt(i + 1)[key as keyof ReturnType<typeof metricsAt>],
        timeAt(i + 1).getTime(),
      ]).filter(([, v]) => Number.isFinite(v)),
    ]),
  ),
};
await writeFile(join(values.out, 'expected.json'), JSON.stringify(expected, null, 1));
console.log(
  `logged ${run.name}: ${steps} steps to MLflow run ${mlflow.runId} at ${values.mlflow} and to ${tensorboard.file}`,
);
