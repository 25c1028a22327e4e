/**
 * Opens the run store's SQLite file and makes sure it is one: a file that is not a database, a
 * database of another program (other tables or columns), one written by a newer agentrl, a
 * read-only file or folder each become one `StoreError` naming the file and the fix. A version-1
 * store is migrated in place (one transaction); a version-2 one gets the trajectories' reward
 * columns (read-only, it is read as it is: its trajectories have no components).
 */
import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StoreError, translateSqliteError } from './errors.ts';
import {
  migrateVersion1Sql,
  requiredColumns,
  requiredRunColumns,
  schemaSql,
  schemaVersion,
  version3TrajectoryColumns,
} from './schema.ts';

export interface OpenDatabaseOptions {
  readonly: boolean;
  /**
   * SQLite's `max_page_count` for this connection: writes past it fail with SQLITE_FULL exactly
   * as on a full disk (how the tests make a disk full).
   */
  maxPageCount?: number;
}

export function openDatabase(path: string, { readonly, maxPageCount }: OpenDatabaseOptions): Database.Database {
  let db: Database.Database | undefined;
  try {
    if (!readonly) {
      mkdirSync(dirname(path), { recursive: true });
      refuseReadOnlyFile(path);
    }
    db = new Database(path, { readonly, fileMustExist: readonly });
    db.pragma('busy_timeout = 10000');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > schemaVersion) {
      throw new StoreError(
        path,
        'newer-schema',
        `written by a newer agentrl (store schema ${version}, this agentrl reads up to ${schemaVersion}); update agentrl or pass --store with another file`,
        { version },
      );
    }
    const layout = checkTables(db, path, version);
    if (!readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      if (layout === 'version-1') migrateFromVersion1(db);
      db.pragma('foreign_keys = ON');
      db.exec(schemaSql);
      addVersion3Columns(db);
      db.pragma(`user_version = ${schemaVersion}`);
    }
    if (maxPageCount !== undefined) db.pragma(`max_page_count = ${maxPageCount}`);
    return db;
  } catch (error) {
    db?.close();
    if (error instanceof StoreError) throw error;
    const code = (error as { code?: string }).code ?? '';
    if (readonly && code.startsWith('SQLITE_CANTOPEN') && !existsSync(`${path}-shm`) && !isWritable(dirname(path))) {
      throw translateSqliteError(
        path,
        Object.assign(new Error((error as Error).message), { code: 'SQLITE_READONLY_DIRECTORY' }),
        'opening it to read',
      );
    }
    const translated = translateSqliteError(path, error, readonly ? 'opening it to read' : 'opening it');
    if (translated instanceof StoreError) throw translated;
    throw new StoreError(
      path,
      'cannot-open',
      `cannot open the run store (${(error as Error).message})`,
      {},
      { cause: error },
    );
  }
}

function isWritable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * SQLite silently opens a file it may not write read-only, and fails at the first write (perhaps an
 * hour into a run); opening it for writing first says so at once.
 */
function refuseReadOnlyFile(path: string): void {
  if (!existsSync(path)) return;
  try {
    closeSync(openSync(path, 'r+'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      throw translateSqliteError(
        path,
        Object.assign(new Error(`${code}: cannot open it for writing`), { code: 'SQLITE_READONLY' }),
        'opening it',
      );
    }
    throw error;
  }
}

/** A file with tables that are not the run store's (another program's database) is refused, not written into. */
function checkTables(db: Database.Database, path: string, version: number): 'empty' | 'version-1' | 'current' {
  const tables = (
    db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      .all() as { name: string }[]
  ).map((t) => t.name);
  if (tables.length === 0) return 'empty';
  const columnsOf = (table: string) =>
    new Set((db.prepare(`PRAGMA table_info(${JSON.stringify(table)})`).all() as { name: string }[]).map((c) => c.name));
  // Version 1 (or a version-1 file whose version number was never written) lacks the version-2 run columns.
  const layout =
    version < 2 && tables.includes('runs') && !columnsOf('runs').has('status_reason') ? 'version-1' : 'current';
  const foreign = tables.filter((t) => !(t in requiredColumns));
  const version2Columns = ['status_reason', 'checkpoint_dir', 'lock_pid', 'lock_host', 'lock_since'];
  const expectedRunColumns =
    layout === 'current' ? requiredRunColumns : requiredRunColumns.filter((c) => !version2Columns.includes(c));
  const missing: string[] = [];
  for (const table of tables) {
    const required = requiredColumns[table];
    if (required === undefined) continue;
    const columns = columnsOf(table);
    const expected = table === 'runs' ? expectedRunColumns : required;
    for (const column of expected) if (!columns.has(column)) missing.push(`${table}.${column}`);
  }
  if (foreign.length > 0 || missing.length > 0 || (version === 0 && !tables.includes('runs'))) {
    const found =
      foreign.length > 0
        ? `tables ${foreign.join(', ')}`
        : `no column ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''}`;
    throw new StoreError(
      path,
      'other-schema',
      `is an SQLite database with another schema (${found}), not an agentrl run store; pass --store with another file`,
      { tables, missing },
    );
  }
  return layout;
}

/** A version-2 trajectories table gets the reward columns (NULL in its rows), in one transaction. */
function addVersion3Columns(db: Database.Database): void {
  const columns = new Set(
    (db.prepare('PRAGMA table_info(trajectories)').all() as { name: string }[]).map((c) => c.name),
  );
  const missing = version3TrajectoryColumns.filter(([name]) => !columns.has(name));
  if (missing.length === 0) return;
  db.transaction(() => {
    for (const [, sql] of missing) db.exec(`ALTER TABLE trajectories ADD COLUMN ${sql}`);
  }).immediate();
}

function migrateFromVersion1(db: Database.Database): void {
  // SQLite's procedure for a table change: foreign keys off (dropping `runs` must not cascade), one transaction.
  db.pragma('foreign_keys = OFF');
  db.transaction(() => {
    db.exec(migrateVersion1Sql);
    db.pragma(`user_version = ${schemaVersion}`);
  }).immediate();
}
