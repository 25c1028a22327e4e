import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engineThreads } from './engine-threads.ts';

test('engineThreads: a positive AGENTRL_THREADS, else ORT’s own choice (undefined)', () => {
  assert.equal(engineThreads({ AGENTRL_THREADS: '2' }), 2);
  assert.equal(engineThreads({ AGENTRL_THREADS: ' 4 ' }), 4);
  for (const raw of [undefined, '', '0', '-1', '1.5', 'two'])
    assert.equal(engineThreads({ AGENTRL_THREADS: raw }), undefined, String(raw));
});
