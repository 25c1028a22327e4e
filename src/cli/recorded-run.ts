/**
 * The life of a recorded run (train, dpo) around its work: a run ends `completed`, `interrupted`
 * (Ctrl-C / SIGTERM, in any phase: the reason says which; exit 130 / 143) or `failed` with the
 * error's message as the reason (the error is then reported by the command line); the process's
 * lock on the run is released however it ends.
 */
import type { RunStore } from '../store/run-store.ts';
import type { RunRecord } from '../store/types.ts';
import { signalName, type RunInterrupt, type StopSignal } from './interrupt.ts';

export interface RecordedRunOptions {
  store: RunStore;
  run: RunRecord;
  label: string;
  interrupt: RunInterrupt;
  /** How to continue an interrupted run (`agentrl train --resume …`); undefined when the command does not resume. */
  resumeCommand?: string;
}

export async function recordedRun(
  { store, run, label, interrupt, resumeCommand }: RecordedRunOptions,
  work: () => Promise<'completed' | 'interrupted'>,
): Promise<number> {
  const markInterrupted = (signal: StopSignal, phase: string): void => {
    const reason = `${signalName(signal)} during ${phase}`;
    store.setStatus(run.id, 'interrupted', reason);
    store.unlockRun(run.id);
    console.error(
      `${label}: run ${run.name} interrupted (${reason}); ${resumeCommand ? `continue it with: ${resumeCommand}` : 'this command does not resume; start a new run'}`,
    );
  };
  interrupt.onExit = markInterrupted;
  try {
    const outcome = await work();
    if (outcome === 'interrupted' && interrupt.signal !== undefined) {
      markInterrupted(interrupt.signal, interrupt.phaseName());
      return interrupt.exitCode();
    }
    store.setStatus(run.id, 'completed');
    console.log(`run ${run.name} recorded in ${store.path} (agentrl dashboard --store ${store.path})`);
    return 0;
  } catch (error) {
    try {
      store.setStatus(run.id, 'failed', error instanceof Error ? error.message : String(error));
    } catch {
      // The store itself failed (disk full, read-only): the error being reported says so.
    }
    throw error;
  } finally {
    interrupt.onExit = () => {};
    try {
      store.unlockRun(run.id);
    } catch {
      // As above: a store that cannot be written leaves the lock, which the next process takes over.
    }
  }
}
