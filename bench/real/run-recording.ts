/**
 * bench:real's optional run store (BENCH_REAL_STORE=<file>): the run is recorded as `agentrl train`
 * records one — each iteration's metrics (reward/<component>, monitor/<signal> among them),
 * trajectories with their reward components, and resumable state — so `agentrl dashboard --store
 * <file>` shows it.
 */
import type { Tokenizer } from '../../src/chat/tokenizer.ts';
import type { RewardComponentsSpec } from '../../src/core/types.ts';
import { type RewardMonitor, rewardMonitor } from '../../src/rewards/monitor/index.ts';
import type { TrainablePolicy } from '../../src/policy/types.ts';
import { RunStore } from '../../src/store/run-store.ts';
import { RunRecorder } from '../../src/train/run-recorder.ts';
import type { IterationMetrics, RlResumeState, RlRunOptions, TrainingWarning } from '../../src/train/rl.ts';

export interface BenchRecording {
  hooks: Pick<RlRunOptions<unknown>, 'onTrajectories' | 'onAdvantages'>;
  commit(policy: TrainablePolicy, metrics: IterationMetrics, state: RlResumeState): Promise<void>;
  finish(status: 'completed' | 'failed', reason?: string): void;
  runName: string;
}

export function benchRecording(
  path: string | undefined,
  { config, seed, tokenizer }: { config: Record<string, unknown>; seed: number; tokenizer: Tokenizer },
): BenchRecording | undefined {
  if (path === undefined || path === '') return undefined;
  const store = RunStore.open(path);
  const run = store.createRun({ namePrefix: 'bench-real', command: 'bench:real', seed, gitCommit: null, config });
  const recorder = new RunRecorder({ store, runId: run.id, tokenizer, trajectoriesPerIteration: 'all' });
  return {
    hooks: recorder.hooks(),
    commit: async (policy, metrics, state) => {
      await recorder.commit(policy, metrics, state);
    },
    finish: (status, reason) => {
      store.setStatus(run.id, status, reason ?? null);
      store.close();
      console.log(`recorded as run ${run.name} in ${path}: agentrl dashboard --store ${path}`);
    },
    runName: run.name,
  };
}

/** The reward-hacking monitor in mode warn: every warning printed, the iterations where it fired kept for the summary. */
export function monitorWatch(rewardSpec: RewardComponentsSpec | undefined): {
  monitor: RewardMonitor;
  onWarning: (warning: TrainingWarning) => void;
  summary: (iterations: number) => string;
} {
  const fired = new Set<number>();
  return {
    monitor: rewardMonitor({ config: { mode: 'warn' }, rewardSpec }),
    onWarning: (warning) => {
      console.log(`  warning: ${warning.message}`);
      if (warning.kind === 'reward-hacking') fired.add(warning.iteration);
    },
    summary: (iterations) =>
      fired.size === 0
        ? `reward-hacking monitor (warn): silent over ${iterations} iterations`
        : `reward-hacking monitor (warn): fired at iterations ${[...fired].join(', ')}`,
  };
}
