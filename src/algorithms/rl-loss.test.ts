import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidArgumentError } from '../core/errors.ts';
import { at } from '../core/indexing.ts';
import { Rng } from '../core/rng.ts';
import { lossAggModes } from './aggregation.ts';
import { assertAllClose, assertClose, assertGradientMatches, randomMask, randomSequences } from './gradient-check.ts';
import { dpoLoss, policyLossNames, rlLoss, rlLossConfigSchema, rlLossTerms, sftLoss, type RlBatch } from './rl-loss.ts';

function randomBatch(seed: number) {
  const rng = new Rng(seed);
  const lengths = [6, 4, 8, 5];
  const lossMask = randomMask(rng, lengths);
  const oldLogprobs = randomSequences(rng, lengths, () => -3 * rng.next());
  const logprobs = oldLogprobs.map((seq) => seq.map((x) => x + 0.3 * rng.normal()));
  const refLogprobs = oldLogprobs.map((seq) => seq.map((x) => x + 0.5 * rng.normal()));
  // Constant per sequence (GRPO-style) so that GSPO's token form is the exact gradient.
  const advantages = lengths.map((length) => new Float64Array(length).fill(rng.normal()));
  const oldValues = randomSequences(rng, lengths, () => rng.normal());
  const values = oldValues.map((seq) => seq.map((v) => v + 0.5 * rng.normal()));
  const returns = randomSequences(rng, lengths, () => rng.normal());
  const entropies = randomSequences(rng, lengths, () => 2 * rng.next());
  const batch: RlBatch = { oldLogprobs, refLogprobs, advantages, lossMask, returns, oldValues };
  return { batch, current: { logprobs, values, entropies } };
}

describe('rlLossTerms', () => {
  for (const policyLoss of policyLossNames) {
    for (const lossAggMode of lossAggModes) {
      it(`${policyLoss}, ${lossAggMode}: gradients w.r.t. logprobs, values, entropies match finite differences`, () => {
        const { batch, current } = randomBatch(23);
        const lossScaleFactor = lossAggMode === 'seq-mean-token-sum-norm' ? 16 : null;
        const config = rlLossConfigSchema.parse({
          policyLoss,
          lossAggMode,
          lossScaleFactor,
          useKlLoss: true,
          klLossCoef: 0.1,
          entropyCoef: 0.01,
          vfCoef: 0.5,
        });
        const terms = rlLossTerms(batch, current, config);
        assert.ok(terms.gradValues && terms.gradEntropies);
        // CISPO's ratio is a constant of its loss (sg): moving `old` with x keeps it so for the difference.
        const batchAt = (x: Float64Array[]): RlBatch =>
          policyLoss !== 'cispo'
            ? batch
            : {
                ...batch,
                oldLogprobs: x.map((row, i) =>
                  row.map((v, t) => v - at(at(current.logprobs, i), t) + at(at(batch.oldLogprobs, i), t)),
                ),
              };
        assertGradientMatches(
          'logprobs',
          (x) => rlLossTerms(batchAt(x), { ...current, logprobs: x }, config).loss,
          current.logprobs,
          terms.gradLogprobs,
        );
        assertGradientMatches(
          'values',
          (x) => rlLossTerms(batch, { ...current, values: x }, config).loss,
          current.values,
          terms.gradValues,
        );
        assertGradientMatches(
          'entropies',
          (x) => rlLossTerms(batch, { ...current, entropies: x }, config).loss,
          current.entropies,
          terms.gradEntropies,
        );
      });
    }
  }

  it('the total is pg_loss − entropyCoef·entropy + klLossCoef·kl + vfCoef·vf_loss', () => {
    const { batch, current } = randomBatch(29);
    const config = rlLossConfigSchema.parse({ useKlLoss: true, klLossCoef: 0.1, entropyCoef: 0.01, vfCoef: 0.5 });
    const { loss, metrics } = rlLossTerms(batch, current, config);
    assertClose(loss, metrics.pg_loss! - 0.01 * metrics.entropy! + 0.1 * metrics.kl! + 0.5 * metrics.vf_loss!);
    assertClose(metrics.loss!, loss);
  });

  it('defaults are verl’s: PPO-clip 0.2/0.2, dual clip 3, token-mean, no KL loss, entropy 0', () => {
    const config = rlLossConfigSchema.parse({});
    assert.equal(config.policyLoss, 'ppo-clip');
    assert.equal(config.clipRatioLow, 0.2);
    assert.equal(config.clipRatioHigh, 0.2);
    assert.equal(config.clipRatioC, 3);
    assert.equal(config.lossAggMode, 'token-mean');
    assert.equal(config.useKlLoss, false);
    assert.equal(config.klLossCoef, 0.001);
    assert.equal(config.klLossType, 'k3');
    assert.equal(config.entropyCoef, 0);
  });
});

describe('rlLoss (TokenLoss)', () => {
  it('compute returns float32 arrays equal to rlLossTerms', () => {
    const { batch, current } = randomBatch(31);
    const config = { useKlLoss: true, entropyCoef: 0.01 };
    const loss = rlLoss({ ...batch, config });
    assert.equal(loss.dependsOnCurrent, true);
    const input = {
      logprobs: current.logprobs.map((s) => Float32Array.from(s)),
      values: current.values.map((s) => Float32Array.from(s)),
      entropies: current.entropies.map((s) => Float32Array.from(s)),
    };
    const output = loss.compute(input);
    const expected = rlLossTerms(batch, input, rlLossConfigSchema.parse(config));
    assert.ok(output.gradLogprobs[0] instanceof Float32Array);
    assertClose(output.loss, expected.loss);
    output.gradLogprobs.forEach((g, i) => {
      assertAllClose(g, Float32Array.from(at(expected.gradLogprobs, i)));
    });
    output.gradValues!.forEach((g, i) => {
      assertAllClose(g, Float32Array.from(at(expected.gradValues!, i)));
    });
    output.gradEntropies!.forEach((g, i) => {
      assertAllClose(g, Float32Array.from(at(expected.gradEntropies!, i)));
    });
  });

  it('without returns there is no value term and no gradValues; without entropyCoef no gradEntropies', () => {
    const { batch, current } = randomBatch(37);
    const output = rlLoss({
      oldLogprobs: batch.oldLogprobs,
      advantages: batch.advantages,
      lossMask: batch.lossMask,
    }).compute({
      logprobs: current.logprobs.map((s) => Float32Array.from(s)),
    });
    assert.equal(output.gradValues, undefined);
    assert.equal(output.gradEntropies, undefined);
    assert.equal(output.metrics.vf_loss, undefined);
  });

  it('rejects bad configs and combinations at construction, naming the problem', () => {
    const { batch } = randomBatch(41);
    const { refLogprobs: _ref, ...withoutRef } = batch;
    assert.throws(
      () => rlLoss({ ...withoutRef, config: { useKlLoss: true } }),
      (e: unknown) => e instanceof InvalidArgumentError && /refLogprobs/.test(e.message),
    );
    assert.throws(
      () => rlLoss({ ...batch, config: { clipRatioC: 0.5 } }),
      (e: unknown) => e instanceof InvalidArgumentError && /clipRatioC/.test(e.message),
    );
    assert.throws(
      () => rlLoss({ ...batch, config: { lossAggMode: 'mean' as never } }),
      (e: unknown) => e instanceof InvalidArgumentError && /seq-mean-token-sum-norm/.test(e.message),
    );
    assert.throws(
      () => rlLoss({ ...batch, oldValues: undefined }),
      (e: unknown) => e instanceof InvalidArgumentError && /oldValues/.test(e.message),
    );
    assert.throws(
      () => rlLoss({ ...batch, config: { lossAggMode: 'seq-mean-token-sum-norm' } }),
      (e: unknown) => e instanceof InvalidArgumentError && /lossScaleFactor/.test(e.message),
    );
  });

  it('asks for entropies when entropyCoef is set but the model gave none', () => {
    const { batch, current } = randomBatch(43);
    const loss = rlLoss({ ...batch, config: { entropyCoef: 0.01 } });
    assert.throws(
      () =>
        loss.compute({
          logprobs: current.logprobs.map((s) => Float32Array.from(s)),
          values: current.values.map((s) => Float32Array.from(s)),
        }),
      InvalidArgumentError,
    );
  });
});

describe('sftLoss and dpoLoss (TokenLoss)', () => {
  it('sftLoss does not depend on the current log-probs and returns −mask/count', () => {
    const loss = sftLoss([[0, 1, 1]]);
    assert.equal(loss.dependsOnCurrent, false);
    const output = loss.compute({ logprobs: [Float32Array.from([-1, -2, -4])] });
    assertClose(output.loss, 3);
    assertAllClose(at(output.gradLogprobs, 0), Float32Array.from([0, -0.5, -0.5]));
  });

  it('dpoLoss wraps dpoPairLoss', () => {
    const loss = dpoLoss({ refLogprobs: [[-1.5], [-2]], lossMask: [[1], [1]], pairs: [{ chosen: 0, rejected: 1 }] });
    // h = (−1 + 1.5) − (−3 + 2) = 1.5 → −log σ(0.15)
    const output = loss.compute({ logprobs: [Float32Array.from([-1]), Float32Array.from([-3])] });
    assertClose(output.loss, Math.log1p(Math.exp(-0.15)), 1e-7);
    assert.equal(output.metrics.reward_accuracy, 1);
  });
});
