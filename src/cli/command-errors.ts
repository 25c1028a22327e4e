/**
 * How a command's error reaches the terminal: an agentrl error is one line (its message names the
 * file, flag or port and what to do), exit 2 for a usage mistake and 1 for a failure; anything else
 * is a bug in agentrl, printed with its stack so it can be reported.
 */
import {
  AgentRlError,
  DataFormatError,
  InvalidArgumentError,
  ModelNotFoundError,
  UnknownNameError,
} from '../core/errors.ts';
import { RunNotFoundError } from '../store/run-store.ts';

/** A mistake in what was asked (a flag, a name, a config file, a run or a model that does not exist). */
export function isUsageError(error: unknown): boolean {
  return (
    error instanceof InvalidArgumentError ||
    error instanceof UnknownNameError ||
    error instanceof DataFormatError ||
    error instanceof ModelNotFoundError ||
    error instanceof RunNotFoundError
  );
}

/** Prints the error for `agentrl <command>` and returns the exit code. */
export function reportCommandError(
  command: string,
  error: unknown,
  write: (line: string) => void = (line) => console.error(line),
): number {
  if (error instanceof AgentRlError) {
    write(`agentrl ${command}: ${error.message}`);
    return isUsageError(error) ? 2 : 1;
  }
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  write(`agentrl ${command}: unexpected error (a bug in agentrl; please report it with this output):\n${message}`);
  return 1;
}
