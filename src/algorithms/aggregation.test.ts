import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { aggregate, lossAggModes, type LossAggMode } from './aggregation.ts';
import { assertAllClose, assertClose } from './gradient-check.ts';

// seq0: mask [0,1,1] losses [9,1,3] → masked sum 4, n=2, response length 3−1 = 2
// seq1: mask [1,1,1,1] losses [2,2,2,6] → masked sum 12, n=4, response length 4
// seq2: mask [0,0] (no policy token) — left out of every count
const losses = [
  [9, 1, 3],
  [2, 2, 2, 6],
  [5, 5],
];
const mask = [
  [0, 1, 1],
  [1, 1, 1, 1],
  [0, 0],
];

describe('aggregate', () => {
  const cases: [LossAggMode, number | null, number][] = [
    ['token-mean', null, 16 / 6], // (4 + 12) / 6 tokens
    ['seq-mean-token-mean', null, 2.5], // (4/2 + 12/4) / 2 sequences
    ['seq-mean-token-sum', null, 8], // (4 + 12) / 2 sequences
    ['seq-mean-token-sum-norm', 8, 2], // (4 + 12) / 8
  ];
  for (const [mode, lossScaleFactor, expected] of cases) {
    it(`${mode} (scale ${lossScaleFactor}) = ${expected}, and Σ w·ℓ reproduces it`, () => {
      const { value, weights } = aggregate(losses, mask, { mode, lossScaleFactor });
      assertClose(value, expected);
      let recomposed = 0;
      weights.forEach((w, i) => {
        w.forEach((wt, t) => {
          recomposed += wt * at(at(losses, i), t);
        });
      });
      assertClose(recomposed, expected);
      assertAllClose(at(weights, 2), [0, 0]);
      assert.equal(at(weights, 0)[0], 0);
    });
  }

  it('seq-mean-token-mean weighs each sequence equally', () => {
    const { weights } = aggregate(losses, mask, { mode: 'seq-mean-token-mean' });
    assertAllClose(at(weights, 0), [0, 1 / 4, 1 / 4]); // 1 / (n=2 · S=2)
    assertAllClose(at(weights, 1), [1 / 8, 1 / 8, 1 / 8, 1 / 8]); // 1 / (4 · 2)
  });

  it('seq-mean-token-sum-norm needs its constant C (never the batch’s longest response, which would vary per minibatch)', () => {
    assert.throws(
      () => aggregate(losses, mask, { mode: 'seq-mean-token-sum-norm' }),
      (e: unknown) => e instanceof InvalidArgumentError && /lossScaleFactor/.test(e.message),
    );
  });

  it('rejects an unknown mode, listing the allowed ones', () => {
    assert.throws(
      () => aggregate(losses, mask, { mode: 'mean' as LossAggMode }),
      (error: unknown) => error instanceof InvalidArgumentError && lossAggModes.every((m) => error.message.includes(m)),
    );
  });
});
