/**
 * A run's lock: which process trains it (`lock_pid`, `lock_host`, `lock_since` on its row). A
 * second process refuses the run; a lock left by a process that no longer runs is taken over.
 */
import { hostname } from 'node:os';
import type Database from 'better-sqlite3';
import { RunLockedError } from './errors.ts';
import type { Row } from './rows.ts';

/** Who holds a run's lock. */
export interface RunLockHolder {
  pid: number;
  host: string;
  since: string;
}

/**
 * Takes the run's lock for this process (call inside a transaction). A lock held by another live
 * process on this host (or any lock from another host) is refused with a RunLockedError naming the
 * holder; a lock left by a process that no longer runs is taken over and its holder returned.
 */
export function takeRunLock(db: Database.Database, file: string, runId: number): { tookOverFrom?: RunLockHolder } {
  const row = db.prepare('SELECT name, lock_pid, lock_host, lock_since FROM runs WHERE id = ?').get(runId) as Row;
  let tookOverFrom: RunLockHolder | undefined;
  if (row.lock_pid !== null && !(row.lock_pid === process.pid && row.lock_host === hostname())) {
    const holder = {
      pid: row.lock_pid as number,
      host: row.lock_host as string,
      since: row.lock_since as string,
    };
    const sameHost = holder.host === hostname();
    if (!sameHost || processIsAlive(holder.pid)) throw new RunLockedError(file, row.name, holder, sameHost);
    tookOverFrom = holder;
  }
  db.prepare('UPDATE runs SET lock_pid = ?, lock_host = ?, lock_since = ? WHERE id = ?').run(
    process.pid,
    hostname(),
    new Date().toISOString(),
    runId,
  );
  return { tookOverFrom };
}

/** Releases the run's lock if this process holds it. */
export function releaseRunLock(db: Database.Database, runId: number): void {
  db.prepare(
    'UPDATE runs SET lock_pid = NULL, lock_host = NULL, lock_since = NULL WHERE id = ? AND lock_pid = ? AND lock_host = ?',
  ).run(runId, process.pid, hostname());
}

/** The process holding the run, if any. */
export function runLockHolder(db: Database.Database, runId: number): RunLockHolder | undefined {
  const row = db.prepare('SELECT lock_pid, lock_host, lock_since FROM runs WHERE id = ?').get(runId) as Row | undefined;
  return row?.lock_pid == null ? undefined : { pid: row.lock_pid, host: row.lock_host, since: row.lock_since };
}

/** Whether a process with this id runs on this host (EPERM: it runs, as another user). */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
