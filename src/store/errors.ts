/**
 * The run store's errors: each names the file and says what to do. SQLite's own errors
 * (`SqliteError` with a code such as SQLITE_NOTADB or SQLITE_FULL) are translated here, so the
 * command line prints one line instead of a stack trace.
 */
import { AgentRlError } from '../core/errors.ts';

export type StoreProblem =
  | 'not-a-database'
  | 'other-schema'
  | 'newer-schema'
  | 'read-only'
  | 'full'
  | 'cannot-open'
  | 'checkpoint-folder-taken'
  | 'name-taken'
  | 'no-state';

/** The run store file cannot be used as asked; `problem` says why. */
export class StoreError extends AgentRlError {
  readonly problem: StoreProblem;
  constructor(
    file: string,
    problem: StoreProblem,
    message: string,
    details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super('STORE', `${file}: ${message}`, { file, problem, ...details }, options);
    this.problem = problem;
  }
}

/** Another live process holds the run (a second `--resume` of one run). */
export class RunLockedError extends AgentRlError {
  constructor(file: string, run: string, holder: { pid: number; host: string; since: string }, sameHost: boolean) {
    const advice = sameHost
      ? `wait for it to end, or stop it (kill ${holder.pid}) and resume again`
      : `if no process on ${holder.host} is training it any more, resume it from ${holder.host} (a dead holder's lock is taken over there)`;
    super(
      'RUN_LOCKED',
      `${file}: run ${run} is in use by process ${holder.pid} on ${holder.host} (since ${holder.since}); ${advice}`,
      { file, run, ...holder },
    );
  }
}

interface SqliteLikeError {
  code?: unknown;
  message?: unknown;
}

/** An SQLite error as a StoreError (with the fix), or the error itself when it is another kind. */
export function translateSqliteError(file: string, error: unknown, doing: string): unknown {
  const code = typeof (error as SqliteLikeError)?.code === 'string' ? ((error as SqliteLikeError).code as string) : '';
  const reason = String((error as SqliteLikeError)?.message ?? error);
  if (code === 'SQLITE_NOTADB') {
    return new StoreError(
      file,
      'not-a-database',
      `is not a SQLite database, so not an agentrl run store; pass --store with another file (or move this one away)`,
      { code },
      { cause: error },
    );
  }
  if (code === 'SQLITE_FULL') {
    return new StoreError(
      file,
      'full',
      `the disk is full (SQLite: ${reason}) while ${doing}; free some space, then resume the run with agentrl train --resume <run> --store ${file}`,
      { code },
      { cause: error },
    );
  }
  if (code === 'SQLITE_READONLY_DIRECTORY') {
    return new StoreError(
      file,
      'read-only',
      `its folder is read-only, and SQLite needs to create ${file}-shm beside the file while ${doing}; make the folder writable, or copy the file to a writable folder and pass --store <copy>`,
      { code },
      { cause: error },
    );
  }
  if (code.startsWith('SQLITE_READONLY')) {
    return new StoreError(
      file,
      'read-only',
      `the run store is read-only (${reason}) while ${doing}; make the file writable (chmod u+w, or remount the disk read-write), or copy it and pass --store <copy>`,
      { code },
      { cause: error },
    );
  }
  if (code.startsWith('SQLITE_CANTOPEN') || code === 'SQLITE_PERM') {
    return new StoreError(
      file,
      'cannot-open',
      `cannot open the run store (${reason}) while ${doing}; check that the path is a file you may read and write`,
      { code },
      { cause: error },
    );
  }
  if (code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR_')) {
    if (/ENOSPC|full/i.test(reason))
      return translateSqliteError(file, Object.assign(new Error(reason), { code: 'SQLITE_FULL' }), doing);
  }
  return error;
}
