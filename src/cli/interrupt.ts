/**
 * Ctrl-C (SIGINT) and SIGTERM for long commands. Each phase of a command says how it stops:
 *
 * - a graceful phase (RL or DPO iterations, SFT steps) asks the work to stop at its next safe
 *   point (`stopRequested()`); the command then saves what it has and exits with `exitCode()`;
 * - an immediate phase (a warm start, an evaluation: nothing in it is worth saving half-done)
 *   ends the process at once, after `onExit` has recorded it (the run marked interrupted).
 *
 * A second signal always ends the process at once. Exit codes follow the shell's 128 + signal:
 * 130 for SIGINT, 143 for SIGTERM.
 */
export type StopSignal = 'SIGINT' | 'SIGTERM';

export const signalExitCodes: Readonly<Record<StopSignal, number>> = { SIGINT: 130, SIGTERM: 143 };

export function signalName(signal: StopSignal): string {
  return signal === 'SIGINT' ? 'Ctrl-C' : 'SIGTERM';
}

interface Phase {
  name: string;
  /** What a graceful stop does ("finishing this iteration, then saving"); undefined = stop at once. */
  graceful?: string;
}

export class RunInterrupt {
  /** The first signal received, if any. */
  signal: StopSignal | undefined;
  /** Called (synchronously) just before the process ends at once: record the interruption. */
  onExit: (signal: StopSignal, phase: string) => void = () => {};
  private phase: Phase = { name: 'starting' };
  private readonly handler = (signal: StopSignal): void => this.receive(signal);

  constructor(private readonly label: string) {
    process.on('SIGINT', this.handler);
    process.on('SIGTERM', this.handler);
  }

  /** Enters a phase; `graceful` says what a stop does in it (omit for a phase that ends at once). */
  enter(name: string, { graceful }: { graceful?: string } = {}): void {
    this.phase = { name, graceful };
    // A signal that came in a graceful phase, just before this immediate one, ends the process here.
    if (this.signal !== undefined && graceful === undefined) this.exitNow(this.signal);
  }

  phaseName(): string {
    return this.phase.name;
  }

  readonly stopRequested = (): boolean => this.signal !== undefined;

  /** 130 / 143 after a signal, 0 otherwise. */
  exitCode(): number {
    return this.signal === undefined ? 0 : signalExitCodes[this.signal];
  }

  dispose(): void {
    process.removeListener('SIGINT', this.handler);
    process.removeListener('SIGTERM', this.handler);
  }

  private receive(signal: StopSignal): void {
    const again = this.signal !== undefined;
    this.signal ??= signal;
    if (again || this.phase.graceful === undefined) {
      console.error(`\n${this.label}: ${signalName(signal)} during ${this.phase.name} — stopping now`);
      this.exitNow(this.signal);
    }
    console.error(
      `\n${this.label}: ${signalName(signal)} — ${this.phase.graceful} (${signalName(signal)} again to stop at once)`,
    );
  }

  private exitNow(signal: StopSignal): never {
    try {
      this.onExit(signal, this.phase.name);
    } finally {
      process.exit(signalExitCodes[signal]);
    }
  }
}

/** A graceful stop for a command with one phase (`agentrl sft`). */
export function gracefulInterrupt(label: string, what: string): RunInterrupt {
  const interrupt = new RunInterrupt(label);
  interrupt.enter(label, { graceful: what });
  return interrupt;
}
