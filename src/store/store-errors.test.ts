import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RunLockedError, StoreError } from './errors.ts';
import { RunStore } from './run-store.ts';
import { syntheticStep } from './test-data.ts';

async function withDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agentrl-store-errors-'));
  try {
    await body(dir);
  } finally {
    spawnSync('chattr', ['-R', '-i', dir], { stdio: 'ignore' });
    await chmod(dir, 0o755).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

function storeError(body: () => unknown): StoreError {
  try {
    body();
  } catch (error) {
    if (error instanceof StoreError) return error;
    throw error;
  }
  assert.fail('no StoreError');
}

/**
 * Makes a path unwritable for this process, for real: chmod for a normal user; root ignores
 * permissions, so as root the file (or folder) is made immutable (chattr +i). False when neither works.
 */
function makeReadOnly(path: string, mode: number): boolean {
  if (process.getuid?.() === 0) return spawnSync('chattr', ['+i', path]).status === 0;
  spawnSync('chmod', [mode.toString(8), path]);
  return true;
}

test('run store: a file that is not a SQLite database is named, with what to do', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'notes.db');
    await writeFile(file, 'these are my notes, not a database\n'.repeat(20));
    for (const readonly of [false, true]) {
      const error = storeError(() => RunStore.open(file, { readonly }));
      assert.equal(error.problem, 'not-a-database');
      assert.match(
        error.message,
        new RegExp(`^${file}: is not a SQLite database, so not an agentrl run store; pass --store with another file`),
      );
    }
  });
});

test('run store: a database with another schema is refused, untouched', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'other.db');
    const other = new Database(file);
    other.exec('CREATE TABLE runs (id INTEGER PRIMARY KEY, foo TEXT); CREATE TABLE songs (title TEXT)');
    other.close();
    const error = storeError(() => RunStore.open(file));
    assert.equal(error.problem, 'other-schema');
    assert.match(
      error.message,
      /is an SQLite database with another schema \(tables songs\), not an agentrl run store; pass --store with another file/,
    );
    const check = new Database(file, { readonly: true });
    assert.deepEqual(
      check.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all(),
      [{ name: 'runs' }, { name: 'songs' }],
      'no table added',
    );
    check.close();
    const onlyRuns = join(dir, 'only-runs.db');
    const db = new Database(onlyRuns);
    db.exec('CREATE TABLE runs (id INTEGER PRIMARY KEY, foo TEXT)');
    db.close();
    assert.match(
      storeError(() => RunStore.open(onlyRuns, { readonly: true })).message,
      /another schema \(no column runs\.name, runs\.command, runs\.status, …\)/,
    );
  });
});

test('run store: a version-1 store is migrated: stopped runs become interrupted, data kept', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'v1.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, command TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'stopped', 'failed')), seed INTEGER NOT NULL, git_commit TEXT,
      config TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE TABLE metrics (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, step INTEGER NOT NULL, time TEXT NOT NULL, "values" TEXT NOT NULL, PRIMARY KEY (run_id, step));
      INSERT INTO runs VALUES (1, 'bandit-grpo-1', 'train', 'stopped', 1, NULL, '{"env":"bandit"}', 't', 't');
      INSERT INTO metrics VALUES (1, 1, 't', '{"reward":0.5}');
      PRAGMA user_version = 1;`);
    db.close();
    const store = RunStore.open(file);
    const run = store.run('bandit-grpo-1');
    assert.equal(run.status, 'interrupted');
    assert.equal(run.checkpointDir, null);
    assert.deepEqual(
      store.metrics(run.id).map((m) => m.values),
      [{ reward: 0.5 }],
      'the metrics survived the rebuild of runs',
    );
    assert.equal(store.integrityCheck(), 'ok');
    store.close();
  });
});

test('run store: a read-only store refuses writes with what to do; a read-only folder is named for export', async (t) => {
  await withDir(async (dir) => {
    const file = join(dir, 'runs.db');
    const store = RunStore.open(file);
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    store.recordStep(run.id, syntheticStep(1, 8));
    store.close();
    if (!makeReadOnly(file, 0o444)) return t.skip('cannot make a file read-only here (root without chattr)');
    const error = storeError(() => RunStore.open(file));
    assert.equal(error.problem, 'read-only');
    assert.match(
      error.message,
      new RegExp(
        `^${file}: the run store is read-only \\(.*\\) while opening it; make the file writable \\(chmod u\\+w, or remount the disk read-write\\), or copy it and pass --store <copy>`,
      ),
    );
    // Reading a read-only file works while its folder is writable.
    const reader = RunStore.open(file, { readonly: true });
    assert.deepEqual(
      reader.metrics(run.id).map((m) => m.step),
      [1],
    );
    reader.close();
    // The reader leaves its (empty) -wal and -shm files behind; without them, in a read-only folder
    await rm(`${file}-wal`, { force: true });
    await rm(`${file}-shm`, { force: true });
    // In a read-only folder SQLite cannot create the -shm file that WAL mode reads through.
    if (!makeReadOnly(dir, 0o555)) return;
    const folder = storeError(() => RunStore.open(file, { readonly: true }).runs());
    assert.equal(folder.problem, 'read-only');
    assert.match(
      folder.message,
      /its folder is read-only, and SQLite needs to create .*runs\.db-shm beside the file while opening it to read; make the folder writable, or copy the file to a writable folder and pass --store <copy>/,
    );
  });
});

test('run store: a full disk (SQLite max_page_count, the same SQLITE_FULL) is one error naming the file; committed steps stay', async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'runs.db');
    const store = RunStore.open(file, { maxPageCount: 40 });
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    let step = 0;
    const error = storeError(() => {
      for (step = 1; step < 1000; step++) store.recordStep(run.id, syntheticStep(step, 256));
    });
    assert.equal(error.problem, 'full');
    assert.match(
      error.message,
      new RegExp(
        `^${file}: the disk is full \\(SQLite: database or disk is full\\) while recording step ${step}; free some space, then resume the run with agentrl train --resume <run> --store ${file}`,
      ),
    );
    assert.deepEqual(
      store.metrics(run.id).map((m) => m.step),
      Array.from({ length: step - 1 }, (_, i) => i + 1),
      'every step before the full one is whole',
    );
    store.setStatus(run.id, 'failed', error.message);
    assert.equal(store.run(run.id).statusReason, error.message, 'the failure reason still fits');
    store.close();
  });
});

test("run store: one process at a time holds a run; a dead holder's lock is taken over", async () => {
  await withDir(async (dir) => {
    const file = join(dir, 'runs.db');
    const store = RunStore.open(file);
    const run = store.createRun({ command: 'train', seed: 0, gitCommit: null, config: {} });
    assert.equal(store.lockHolder(run.id)?.pid, process.pid, 'a new run is locked by its creator');
    assert.deepEqual(store.lockRun(run.id), { tookOverFrom: undefined }, 'the holder may lock again');
    store.unlockRun(run.id);
    assert.equal(store.lockHolder(run.id), undefined);
    // Another live process holds the run.
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `
      import { RunStore } from ${JSON.stringify(new URL('./run-store.ts', import.meta.url).href)};
      const store = RunStore.open(${JSON.stringify(file)});
      store.lockRun(${run.id});
      console.log('locked');
      setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk) => String(chunk).includes('locked') && resolve());
        child.on('exit', () => reject(new Error('the locking process exited')));
      });
      assert.throws(
        () => store.lockRun(run.id),
        (e: unknown) =>
          e instanceof RunLockedError &&
          new RegExp(
            `^${file}: run train-1 is in use by process ${child.pid} on .* \\(since .*\\); wait for it to end, or stop it \\(kill ${child.pid}\\) and resume again$`,
          ).test(e.message),
      );
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('close', resolve));
      const { tookOverFrom } = store.lockRun(run.id);
      assert.equal(tookOverFrom?.pid, child.pid, "the dead process's lock is taken over");
      assert.equal(store.lockHolder(run.id)?.pid, process.pid);
    } finally {
      child.kill('SIGKILL');
      store.close();
    }
  });
});

test('run store: two runs never share a checkpoint folder', async () => {
  await withDir(async (dir) => {
    const store = RunStore.open(join(dir, 'runs.db'));
    const a = store.createRun({
      command: 'train',
      namePrefix: 'bandit-grpo',
      seed: 0,
      gitCommit: null,
      config: {},
      checkpointDir: (name) => join(dir, 'checkpoints', name),
    });
    const b = store.createRun({
      command: 'train',
      namePrefix: 'bandit-grpo',
      seed: 0,
      gitCommit: null,
      config: {},
      checkpointDir: (name) => join(dir, 'checkpoints', name),
    });
    assert.equal(a.checkpointDir, join(dir, 'checkpoints', 'bandit-grpo-1'));
    assert.equal(b.checkpointDir, join(dir, 'checkpoints', 'bandit-grpo-2'));
    const taken = storeError(() =>
      store.createRun({
        command: 'train',
        seed: 0,
        gitCommit: null,
        config: {},
        checkpointDir: () => join(dir, 'checkpoints', 'bandit-grpo-1'),
      }),
    );
    assert.equal(taken.problem, 'checkpoint-folder-taken');
    assert.match(
      taken.message,
      /checkpoints\/bandit-grpo-1 is already the checkpoint folder of run bandit-grpo-1; pick another --out/,
    );
    assert.equal(store.runs().length, 2, 'the refused run was not created');
    store.close();
  });
});
