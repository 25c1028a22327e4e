import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BatchRows, BatchStopped } from './batch-rows.ts';
import type { BatchJob } from './batcher.ts';

const sampling = { temperature: 1, topP: 1, stopTokens: [2], stopStrings: [], seed: 1 };
const job = (signal: AbortSignal, maxNewTokens = 4): BatchJob => ({ prompt: [1], maxNewTokens, sampling, signal });

test("BatchRows.signal aborts with a BatchStopped once the batch's last waiting client leaves, not before", () => {
  const first = new AbortController();
  const second = new AbortController();
  const rows = new BatchRows([job(first.signal), job(second.signal)], [2]);
  first.abort();
  assert.equal(rows.signal.aborted, false, 'the second client still waits');
  second.abort();
  assert.equal(rows.signal.aborted, true);
  assert.ok(rows.signal.reason instanceof BatchStopped);
});

test('BatchRows.signal: a complete row does not wait, so the other leaving stops the batch; after dispose() nothing aborts it', () => {
  const done = new AbortController();
  const leaving = new AbortController();
  const rows = new BatchRows([job(done.signal, 1), job(leaving.signal)], [2]);
  assert.equal(rows.take(0, 7, -0.5), true);
  leaving.abort();
  assert.equal(rows.signal.aborted, true, 'row 0 has all its ids, row 1 left');

  const late = new AbortController();
  const disposed = new BatchRows([job(late.signal)], [2]);
  disposed.dispose();
  late.abort();
  assert.equal(disposed.signal.aborted, false, 'the batch had ended');
});
