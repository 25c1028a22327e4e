/**
 * Ctrl-C for long commands: the first SIGINT asks the work to stop at the next safe point (the
 * caller then saves a checkpoint); a second one exits at once.
 */
export function gracefulInterrupt(label: string, what: string): { stopRequested(): boolean; dispose(): void } {
  let stop = false;
  const onSigint = (): void => {
    stop = true;
    console.error(`\n${label}: Ctrl-C — ${what} (Ctrl-C again to abort)`);
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', onSigint);
  return {
    stopRequested: () => stop,
    dispose: () => {
      process.removeListener('SIGINT', onSigint);
    },
  };
}
