/**
 * The batcher runs nothing for nobody: a job whose client left while it waited is never generated,
 * a batch all of whose rows left stops at its next id, a batch-mate that left does not cut the rows
 * still waiting, and `close()` drops the waiting jobs and waits for the running batch.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GenerationBatcher, type SharedSampling, type TokenGenerator } from './batcher.ts';
import { GenerationAbandonedError } from './served-policy-errors.ts';

const stopId = 99;
const sampling: SharedSampling = { temperature: 1, topP: 1, stopTokens: [stopId], stopStrings: [], seed: 1 };

/** A generator that hands id 7 to every row per step, up to maxNewTokens, yielding between steps; what it ran. */
function countingGenerator(): { generate: TokenGenerator; prompts: number[][]; steps: number[]; ended: unknown[] } {
  const seen = { prompts: [] as number[][], steps: [] as number[], ended: [] as unknown[] };
  const generate: TokenGenerator = async (prompts, { maxNewTokens, onToken }) => {
    seen.prompts.push(...prompts.map((prompt) => [...prompt]));
    let step = 0;
    try {
      for (; step < maxNewTokens; step++) {
        await new Promise((resolve) => setImmediate(resolve));
        for (let row = 0; row < prompts.length; row++) onToken(row, 7, -1);
      }
      seen.ended.push('finished');
    } catch (error) {
      seen.ended.push(error);
      throw error;
    } finally {
      seen.steps.push(step);
    }
    return prompts.map(() => ({
      tokens: Array(maxNewTokens).fill(7),
      logprobs: Array(maxNewTokens).fill(-1),
      text: '',
      finishReason: 'length' as const,
    }));
  };
  return { generate, ...seen };
}

test('a job whose client left while it waited is rejected and never generated', async () => {
  const counting = countingGenerator();
  const batcher = new GenerationBatcher({ generate: counting.generate, windowMs: 20 });
  const gone = new AbortController();
  const leaving = batcher.submit({ prompt: [1], maxNewTokens: 4, sampling, signal: gone.signal });
  const staying = batcher.submit({ prompt: [2], maxNewTokens: 4, sampling });
  gone.abort();
  await assert.rejects(leaving, GenerationAbandonedError);
  assert.equal((await staying).tokens.length, 4);
  assert.deepEqual(counting.prompts, [[2]], 'only the waiting client’s prompt was generated');
  const already = new AbortController();
  already.abort();
  await assert.rejects(batcher.submit({ prompt: [3], maxNewTokens: 4, sampling, signal: already.signal }), {
    name: 'GenerationAbandonedError',
  });
});

test('a batch all of whose clients left stops at its next id instead of running to maxNewTokens', async () => {
  const counting = countingGenerator();
  const batcher = new GenerationBatcher({ generate: counting.generate, windowMs: 0 });
  const gone = new AbortController();
  let handed = 0;
  const job = batcher.submit({
    prompt: [1],
    maxNewTokens: 10_000,
    sampling,
    signal: gone.signal,
    onToken: () => {
      if (++handed === 3) gone.abort();
    },
  });
  await assert.rejects(job, GenerationAbandonedError);
  await batcher.close();
  assert.equal(handed, 3, 'no id handed after the client left');
  assert.deepEqual(counting.steps, [3], 'the generator stopped at the step after the client left');
});

test('a batch-mate that left does not cut a row still waiting; once that row has all its ids the batch stops', async () => {
  const counting = countingGenerator();
  const batcher = new GenerationBatcher({ generate: counting.generate, windowMs: 5 });
  const gone = new AbortController();
  let handedToLeaver = 0;
  const leaver = batcher.submit({
    prompt: [1],
    maxNewTokens: 10_000,
    sampling,
    signal: gone.signal,
    onToken: () => {
      if (++handedToLeaver === 2) gone.abort();
    },
  });
  const stayer = batcher.submit({ prompt: [2], maxNewTokens: 6, sampling, signal: new AbortController().signal });
  await assert.rejects(leaver, GenerationAbandonedError);
  const row = await stayer;
  assert.deepEqual(row, { tokens: Array(6).fill(7), logprobs: Array(6).fill(-1), finishReason: 'length' });
  await batcher.close();
  assert.deepEqual(counting.steps, [6], 'the batch ran as long as the waiting row needed, not 10,000 steps');
});

test('close() rejects the waiting jobs, refuses new ones and resolves after the running batch ended', async () => {
  const counting = countingGenerator();
  const batcher = new GenerationBatcher({ generate: counting.generate, windowMs: 0, maxBatchSize: 1 });
  let begun!: () => void;
  const firstId = new Promise<void>((resolve) => {
    begun = resolve;
  });
  const running = batcher.submit({ prompt: [1], maxNewTokens: 50, sampling, onToken: () => begun() });
  const waiting = assert.rejects(batcher.submit({ prompt: [2], maxNewTokens: 5, sampling }), GenerationAbandonedError);
  await firstId; // the first batch has begun; the second job waits
  await batcher.close();
  assert.equal(counting.ended.length, 1, 'the running batch had ended when close() resolved');
  assert.equal((await running).tokens.length, 50);
  await waiting;
  await assert.rejects(batcher.submit({ prompt: [3], maxNewTokens: 1, sampling }), GenerationAbandonedError);
  assert.deepEqual(counting.prompts, [[1]]);
});
