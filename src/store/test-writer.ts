/**
 * Test helper run as a child process by run-store.test.ts: records `steps` training steps into a
 * store (metrics, two trajectories, a checkpoint with a state blob each) and prints
 * `committed <step>` after each commit, so the parent knows what must survive a SIGKILL.
 *
 *   node --import tsx src/store/test-writer.ts <db> <runId> <steps> <tokensPerTrajectory> [pauseMs]
 */
import { RunStore } from './run-store.ts';
import { syntheticStep } from './test-data.ts';

const [path, runId, steps, tokens, pause = '0'] = process.argv.slice(2);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const store = RunStore.open(path!);
for (let step = 1; step <= Number(steps); step++) {
  store.recordStep(Number(runId), syntheticStep(step, Number(tokens)));
  process.stdout.write(`committed ${step}\n`);
  if (Number(pause) > 0) Atomics.wait(sleeper, 0, 0, Number(pause));
}
store.close();
